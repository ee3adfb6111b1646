// RFC 6749 §4.1.2 and RFC 9700 §4.5: an authorization code is single use. A
// second use is refused and every token issued from that code is revoked.
import { InvalidGrant } from '../oauth.errors.js';
export const checkCodeReplay = function checkCodeReplay(ctx) {
    if (!ctx.code.used)
        return;
    const error = new InvalidGrant('authorization code has already been used; the tokens issued from it are revoked (RFC 6749 §4.1.2)');
    error.revokeGrant = 'code_replay';
    throw error;
};
//# sourceMappingURL=check-code-replay.js.map