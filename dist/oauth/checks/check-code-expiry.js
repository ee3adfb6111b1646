// RFC 6749 §4.1.2: authorization codes are short-lived (AUTH_CODE_TTL).
import { InvalidGrant } from '../oauth.errors.js';
export const checkCodeExpiry = function checkCodeExpiry(ctx) {
    if (ctx.code.expired)
        throw new InvalidGrant('authorization code is expired (RFC 6749 §4.1.2)');
};
//# sourceMappingURL=check-code-expiry.js.map