// RFC 6749 §4.1.3: the code must have been issued to the authenticated client.
import { InvalidGrant } from '../oauth.errors.js';
export const checkCodeClient = function checkCodeClient(ctx) {
    if (ctx.code.client_id !== ctx.client.client_id) {
        throw new InvalidGrant('authorization code was issued to another client (RFC 6749 §4.1.3)');
    }
};
//# sourceMappingURL=check-code-client.js.map