// RFC 6749 §6: a refresh may ask for a narrower scope, never one not granted
// originally. Absent, the access token gets the refresh token's scope.
import { InvalidScope } from '../oauth.errors.js';
import { normalizeScopes, parseScope } from '../scopes.js';
export const checkRefreshScope = function checkRefreshScope(ctx) {
    const raw = ctx.params.scope;
    if (typeof raw !== 'string' || raw.trim() === '') {
        ctx.scopes = ctx.token.scopes;
        return;
    }
    const requested = parseScope(raw);
    const wider = requested.filter((s) => !ctx.token.scopes.includes(s));
    if (wider.length > 0) {
        throw new InvalidScope(`scope exceeds what was granted: ${wider.join(' ')}; a refresh may only narrow the scope (RFC 6749 §6)`);
    }
    ctx.scopes = normalizeScopes(requested);
};
//# sourceMappingURL=check-refresh-scope.js.map