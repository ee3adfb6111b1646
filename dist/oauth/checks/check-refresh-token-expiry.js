// RFC 6749 §6: an expired or revoked refresh token is invalid_grant (REFRESH_TOKEN_TTL).
import { InvalidGrant } from '../oauth.errors.js';
export const checkRefreshTokenExpiry = function checkRefreshTokenExpiry(ctx) {
    if (ctx.token.revoked)
        throw new InvalidGrant('refresh token has been revoked (RFC 7009 §2)');
    if (ctx.token.expired)
        throw new InvalidGrant('refresh token is expired (RFC 6749 §6)');
};
//# sourceMappingURL=check-refresh-token-expiry.js.map