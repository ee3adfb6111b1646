// RFC 6749 §4.1.3, §6 and §5.2: grant_type is required; only
// authorization_code and refresh_token are supported (no password grant,
// RFC 9700 §2.4; no client_credentials: every token acts for a user).
import { InvalidRequest, UnsupportedGrantType } from '../oauth.errors.js';
import { stringParam } from './context.js';
export const SUPPORTED_GRANT_TYPES = ['authorization_code', 'refresh_token'];
export function checkGrantType(ctx) {
    const grantType = stringParam(ctx.params, 'grant_type');
    if (grantType === undefined)
        throw new InvalidRequest('grant_type is required (RFC 6749 §4.1.3)');
    if (!SUPPORTED_GRANT_TYPES.includes(grantType)) {
        throw new UnsupportedGrantType(`grant_type ${grantType} is not supported; use authorization_code or refresh_token (RFC 6749 §5.2)`);
    }
}
//# sourceMappingURL=check-grant-type.js.map