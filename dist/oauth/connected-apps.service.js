import { withOrg } from '../db/with-org.js';
import { listConnectedApps as listConnectedAppRows, revokeClientGrantsInOrg } from './grants.queries.js';
import { normalizeScopes } from './scopes.js';
export async function listConnectedApps(pool, organizationId) {
    const apps = await withOrg(pool, organizationId, (db) => listConnectedAppRows(db));
    return apps.map((app) => ({ ...app, scopes: normalizeScopes(app.scopes) }));
}
/** Revokes every grant of the client in the organization; false when it had none (or is another organization's). */
export async function revokeConnectedApp(pool, organizationId, clientId) {
    if (clientId.length === 0 || clientId.length > 200)
        return false;
    const revoked = await withOrg(pool, organizationId, (db) => revokeClientGrantsInOrg(db, clientId));
    return revoked > 0;
}
//# sourceMappingURL=connected-apps.service.js.map