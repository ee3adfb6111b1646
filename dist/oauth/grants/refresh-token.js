// grant_type=refresh_token (RFC 6749 §6) with rotation (RFC 9700 §4.14.2):
// every refresh returns a new refresh token and marks the presented one rotated.
import { hashToken } from '../../auth/tokens.js';
import { withTransaction } from '../../db/transaction.js';
import { REFRESH_TOKEN_CHECKS, runChecks } from '../checks/index.js';
import { stringParam } from '../checks/context.js';
import { revokeGrant } from '../grants.queries.js';
import { InvalidGrant, InvalidRequest, OAuthError } from '../oauth.errors.js';
import { lockRefreshToken, markRefreshTokenRotated } from '../tokens.queries.js';
import { issueTokenPair } from '../tokens.service.js';
export const handleRefreshToken = async function handleRefreshToken(pool, ttls, client, params, options) {
    const refreshToken = stringParam(params, 'refresh_token');
    if (refreshToken === undefined)
        throw new InvalidRequest('refresh_token is required (RFC 6749 §6)');
    const outcome = await withTransaction(pool, async (tx) => {
        const record = await lockRefreshToken(tx, hashToken(refreshToken));
        if (!record)
            return new InvalidGrant('refresh token is unknown (RFC 6749 §5.2)');
        const ctx = { client, params, token: record, graceSeconds: options.refreshReuseGrace };
        try {
            await runChecks(REFRESH_TOKEN_CHECKS, ctx);
        }
        catch (error) {
            if (!(error instanceof OAuthError))
                throw error;
            if (error.revokeGrant)
                await revokeGrant(tx, record.grant_id, error.revokeGrant);
            return error;
        }
        await markRefreshTokenRotated(tx, record.id);
        return issueTokenPair(tx, ttls, { grantId: record.grant_id, accessScopes: ctx.scopes, refreshScopes: record.scopes });
    });
    if (outcome instanceof OAuthError)
        throw outcome;
    return outcome;
};
//# sourceMappingURL=refresh-token.js.map