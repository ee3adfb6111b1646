// RFC 6749 §6: a refresh may ask for a narrower scope, never one not granted
// originally. Absent, the access token gets the refresh token's scope.
import { InvalidScope } from '../oauth.errors.ts';
import { normalizeScopes, parseScope } from '../scopes.ts';
import type { RawParams, RefreshCheck } from './context.ts';

/** The scope a refresh request names, as sent; undefined when it names none (the token's own applies). */
export function requestedRefreshScopes(params: RawParams): string[] | undefined {
  const raw = params.scope;
  return typeof raw !== 'string' || raw.trim() === '' ? undefined : parseScope(raw);
}

export const checkRefreshScope: RefreshCheck = function checkRefreshScope(ctx) {
  const requested = requestedRefreshScopes(ctx.params);
  if (requested === undefined) {
    ctx.scopes = ctx.token.scopes;
    return;
  }
  const wider = requested.filter((s) => !ctx.token.scopes.includes(s));
  if (wider.length > 0) {
    throw new InvalidScope(`scope exceeds what was granted: ${wider.join(' ')}; a refresh may only narrow the scope (RFC 6749 §6)`);
  }
  ctx.scopes = normalizeScopes(requested);
};
