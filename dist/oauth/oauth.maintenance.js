import { deleteExpiredAuthorizationCodes } from './grants.queries.js';
import { deleteExpiredAccessTokens, deleteExpiredRefreshTokens } from './tokens.queries.js';
const KEEP_MS = 24 * 3600_000;
export async function purgeExpiredOAuthRows(pool) {
    const before = new Date(Date.now() - KEEP_MS);
    return (await deleteExpiredAuthorizationCodes(pool, before))
        + (await deleteExpiredAccessTokens(pool, before))
        + (await deleteExpiredRefreshTokens(pool, before));
}
//# sourceMappingURL=oauth.maintenance.js.map