// Operator actions on organizations and users (used by the CLI).
import { hashPassword, verifyPassword } from './passwords.ts';
import { EMAIL_MAX_LENGTH } from './users.queries.ts';
import { NAME_MAX_LENGTH } from '../http/schemas.ts';
import type { Pool } from '../db/pool.ts';
import { withTransaction } from '../db/transaction.ts';
import { findOrganization } from './organizations.queries.ts';
import { findUserByEmail, insertMembership, insertUser, type Role, type User } from './users.queries.ts';

export class OrgsError extends Error {}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Creates a user in an organization. An existing email joins the organization
 * instead (that is how a user gets several), provided the password matches;
 * its name is left as it is. `created` says which happened.
 */
export async function createUser(
  pool: Pool,
  input: { email: string; password: string; organizationId: string; name?: string; role?: Role },
): Promise<User & { created: boolean }> {
  if (!EMAIL.test(input.email) || input.email.length > EMAIL_MAX_LENGTH)
    throw new OrgsError(`--email: "${input.email}" is not an email address`);
  if (input.password.length < 8) throw new OrgsError('--password: must be at least 8 characters');
  if (input.name !== undefined && input.name.length > NAME_MAX_LENGTH) throw new OrgsError(`--name: at most ${NAME_MAX_LENGTH} characters`);
  const organization = await findOrganization(pool, input.organizationId);
  if (!organization) throw new OrgsError(`--org: organization ${input.organizationId} does not exist`);
  const existing = await findUserByEmail(pool, input.email);
  if (existing && !(await verifyPassword(existing.password_hash, input.password))) {
    throw new OrgsError(`--email: ${input.email} already exists with a different password`);
  }
  const passwordHash = existing ? existing.password_hash : await hashPassword(input.password);
  return withTransaction(pool, async (client) => {
    const user = existing ?? (await insertUser(client, { email: input.email, name: input.name ?? null, passwordHash }));
    await insertMembership(client, organization.id, user.id, input.role ?? 'member');
    const { password_hash: _omit, ...publicUser } = user as User & { password_hash?: string };
    return { ...publicUser, created: !existing };
  });
}
