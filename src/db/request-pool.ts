// The pool request work runs on (security review finding 4): a connection
// as switchboard_request, a login role that is neither superuser, table
// owner nor BYPASSRLS (as the migrations create it), so row-level security binds every
// query a request makes, and one that forgets withOrg sees no customer rows.
// Migrations, the delivery worker, housekeeping and the CLI keep the owner
// connection (DATABASE_URL or the embedded server's superuser).
//
// Where the request role's credentials come from:
//   DATABASE_APP_URL set → used as it is (a managed PostgreSQL whose operator
//                          gave switchboard_request a password);
//   otherwise            → the owner URL with user switchboard_request and a
//                          password derived from the owner's (HMAC-SHA-256), so
//                          every process on one cluster derives the same one;
//                          when it does not log in, the owner sets it (ALTER ROLE,
//                          which needs superuser or CREATEROLE).
import { createHmac } from 'node:crypto';
import pg from 'pg';
import { createPool, type Pool } from './pool.ts';

export const REQUEST_ROLE = 'switchboard_request';
const INVALID_PASSWORD = '28P01';

function derivedPassword(ownerUrl: string): string {
  const ownerPassword = decodeURIComponent(new URL(ownerUrl).password);
  return createHmac('sha256', ownerPassword).update(`switchboard:${REQUEST_ROLE}`).digest('base64url');
}

/** The owner URL turned into switchboard_request's, with the derived password. */
export function requestRoleUrl(ownerUrl: string): string {
  const url = new URL(ownerUrl);
  url.username = REQUEST_ROLE;
  url.password = derivedPassword(ownerUrl);
  return url.toString();
}

async function canLogIn(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === INVALID_PASSWORD) return false;
    throw error;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Gives switchboard_request the derived password, as the owner, unless it already logs in with it. */
export async function ensureRequestRoleLogin(ownerPool: Pool, ownerUrl: string): Promise<string> {
  const url = requestRoleUrl(ownerUrl);
  if (await canLogIn(url)) return url;
  // base64url only: safe to inline (ALTER ROLE takes no parameters).
  await ownerPool.query(`ALTER ROLE ${REQUEST_ROLE} WITH LOGIN PASSWORD '${derivedPassword(ownerUrl)}'`).catch((error: Error) => {
    throw new Error(`cannot set the password of ${REQUEST_ROLE} (${error.message}); give it one yourself and set DATABASE_APP_URL`);
  });
  return url;
}

/** The request pool: DATABASE_APP_URL, or switchboard_request on the owner's server. */
export async function openRequestPool(input: {
  ownerPool: Pool;
  ownerUrl: string;
  appUrl: string | undefined;
  max: number;
}): Promise<Pool> {
  const url = input.appUrl ?? (await ensureRequestRoleLogin(input.ownerPool, input.ownerUrl));
  return createPool(url, input.max);
}
