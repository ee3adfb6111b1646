// RFC 6749 §3.3: the requested scope must be known and allowed for the client;
// when absent, the documented default applies (docs/interface.md §5.3: calls:read).
import { InvalidScope } from '../oauth.errors.ts';
import { DEFAULT_SCOPE, isSupportedScope, normalizeScopes, parseScope } from '../scopes.ts';
import { established, type AuthorizationCheck } from './context.ts';

export const checkScope: AuthorizationCheck = function checkScope(ctx) {
  const raw = ctx.params.scope;
  const requested = typeof raw === 'string' && raw.trim() !== '' ? parseScope(raw) : [DEFAULT_SCOPE];
  const unknown = requested.filter((s) => !isSupportedScope(s));
  if (unknown.length > 0) throw new InvalidScope(`unknown scope: ${unknown.join(' ')} (RFC 6749 §3.3)`);
  const notAllowed = requested.filter((s) => !established(ctx.client, 'check-client').scopes.includes(s));
  if (notAllowed.length > 0) throw new InvalidScope(`scope not allowed for this client: ${notAllowed.join(' ')} (RFC 6749 §3.3)`);
  ctx.scopes = normalizeScopes(requested);
};
