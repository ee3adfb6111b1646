// Every query on tenant data runs here: inside a transaction, as the role
// `switchboard_app` (which does not bypass row-level security), with the
// organization set by SET LOCAL so it cannot leak to the next user of the
// pooled connection. A query that forgets this sees no tenant rows at all.
import type { Pool, PoolClient } from './pool.ts';
import { withTransaction } from './transaction.ts';

export const APP_ROLE = 'switchboard_app';

export function withOrg<T>(pool: Pool, organizationId: string, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  return withTransaction(pool, async (client) => {
    await client.query(`SET LOCAL ROLE ${APP_ROLE}`);
    await client.query(`SELECT set_config('app.organization_id', $1, true)`, [organizationId]);
    return fn(client);
  });
}
