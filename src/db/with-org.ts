// Every query on tenant data runs here: inside a transaction, as the role
// `switchboard_app`, with the organization set by SET LOCAL so it cannot leak
// to the next user of the pooled connection. What makes a query that forgets
// this see no customer rows is not this function but the connection: request
// work uses a pool that logs in as switchboard_request (src/db/request-pool.ts;
// neither superuser, owner nor BYPASSRLS), and the tenant tables FORCE
// row-level security (their *_tenant policies). On the owner pool (the worker, the
// CLI) the SET LOCAL ROLE here is what applies the policies.
import type { Pool, PoolClient, Queryable } from './pool.ts';
import { withOneStatementTransaction, withTransaction } from './transaction.ts';

export const APP_ROLE = 'switchboard_app';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * BASE_URL of this process, for what PostgreSQL writes with it (a call's
 * page, app_call_url): set once by whoever loads the configuration (buildApp,
 * the CLI), inlined in every BEGIN so it costs no round trip.
 */
let baseUrlSetting = '';

export function setBaseUrlSetting(baseUrl: string): void {
  baseUrlSetting = baseUrl.replace(/\/+$/, '');
}

function quoted(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

function beginFor(organizationId: string, options: OneStatementOptions = {}): string {
  // The id is inlined so that BEGIN, the role and the setting cost one round
  // trip instead of three (a multi-statement query cannot take parameters);
  // only a well-formed UUID is ever inlined.
  if (!UUID.test(organizationId)) throw new TypeError(`withOrg: "${organizationId}" is not an organization id`);
  const genericPlan = options.genericPlan ? '; SET LOCAL plan_cache_mode = force_generic_plan' : '';
  return `BEGIN; SET LOCAL ROLE ${APP_ROLE}; SELECT set_config('app.organization_id', '${organizationId}', true), set_config('app.base_url', ${quoted(baseUrlSetting)}, true)${genericPlan}`;
}

export interface OneStatementOptions {
  /**
   * Run the statement on its generic plan (planned once per connection)
   * instead of a custom plan made for each execution. PostgreSQL keeps making
   * custom plans for as long as it estimates them cheaper, which for a
   * statement over an array of n rows it always does (it knows n); give this
   * for a statement whose plan does not depend on its values, where planning
   * costs as much as running it (docs/performance.md, "The design choices behind these figures" of `bench:api`).
   */
  genericPlan?: boolean;
}

export async function withOrg<T>(pool: Pool, organizationId: string, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  return withTransaction(pool, fn, beginFor(organizationId));
}

/**
 * withOrg for a single statement, in one round trip (withOneStatementTransaction):
 * BEGIN with the role and the organization, the statement, COMMIT, written together.
 * fn must send its one query before it awaits anything.
 */
export async function withOrgOneStatement<T>(
  pool: Pool,
  organizationId: string,
  fn: (db: Queryable) => Promise<T>,
  options: OneStatementOptions = {},
): Promise<T> {
  return withOneStatementTransaction(pool, fn, beginFor(organizationId, options));
}
