// RFC 6749 §3.1 and §3.2: request parameters must not be included more than once.
import { InvalidRequest } from '../oauth.errors.js';
export function rejectDuplicateParameters(ctx) {
    const repeated = Object.keys(ctx.params).filter((name) => Array.isArray(ctx.params[name]));
    if (repeated.length > 0) {
        throw new InvalidRequest(`parameters must not be included more than once: ${repeated.sort().join(', ')} (RFC 6749 §3.1)`);
    }
}
//# sourceMappingURL=reject-duplicate-parameters.js.map