// The connected-apps page: the clients holding live grants in the signed-in
// user's organization, and revoking one. Tenant queries, so through withOrg.
import type { AuditActor } from '../audit/audit-actor.ts';
import { actAs } from '../audit/audit-events.queries.ts';
import type { Pool } from '../db/pool.ts';
import { withOrg } from '../db/with-org.ts';
import { listConnectedApps as listConnectedAppRows, revokeClientGrantsInOrg, type ConnectedApp } from './grants.queries.ts';
import { normalizeScopes } from './scopes.ts';
import type { Caches } from '../cache/caches.ts';
import { tags } from '../cache/tags.ts';
import { CLIENT_ID_MAX_LENGTH } from '../auth/tokens.ts';

export async function listConnectedApps(pool: Pool, organizationId: string): Promise<ConnectedApp[]> {
  const apps = await withOrg(pool, organizationId, (db) => listConnectedAppRows(db));
  return apps.map((app) => ({ ...app, scopes: normalizeScopes(app.scopes) }));
}

/** Revokes every grant of the client in the organization; false when it had none (or is another organization's). */
export async function revokeConnectedApp(
  pool: Pool,
  caches: Caches,
  organizationId: string,
  clientId: string,
  actor: AuditActor,
): Promise<boolean> {
  if (clientId.length === 0 || clientId.length > CLIENT_ID_MAX_LENGTH) return false;
  const revoked = await withOrg(pool, organizationId, async (db) => {
    // grant.revoked (disconnected) and the stopped subscriptions' events (triggers) name the user.
    await actAs(db, actor);
    return revokeClientGrantsInOrg(db, clientId);
  });
  // The grants' ids are not at hand: every cached token of the client goes (other organizations' refill on their next request).
  if (revoked > 0) caches.evict([tags.client(clientId)]);
  return revoked > 0;
}
