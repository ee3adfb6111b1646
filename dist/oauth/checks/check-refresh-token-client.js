// RFC 6749 §6 and RFC 9700 §4.14.2: a refresh token is bound to the client it
// was issued to; another client presenting it is refused.
import { InvalidGrant } from '../oauth.errors.js';
export const checkRefreshTokenClient = function checkRefreshTokenClient(ctx) {
    if (ctx.token.client_id !== ctx.client.client_id) {
        throw new InvalidGrant('refresh token was issued to another client (RFC 6749 §6)');
    }
};
//# sourceMappingURL=check-refresh-token-client.js.map