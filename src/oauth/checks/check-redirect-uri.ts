// RFC 6749 §3.1.2.3 and RFC 9700 §4.1.3: the redirect URI must equal one the
// client registered, compared as exact strings. It may be omitted only when the
// client registered exactly one. A mismatch is shown on an error page and never
// redirected (RFC 6749 §4.1.2.1), or the server would be an open redirector.
import { InvalidRequest } from '../oauth.errors.ts';
import { established, type AuthorizationCheck } from './context.ts';

export const checkRedirectUri: AuthorizationCheck = function checkRedirectUri(ctx) {
  const registered = established(ctx.client, 'check-client').redirect_uris;
  const raw = ctx.params.redirect_uri;
  if (Array.isArray(raw)) throw new InvalidRequest('redirect_uri must be given once (RFC 6749 §3.1)');
  if (raw === undefined || raw === '') {
    if (registered.length !== 1) {
      throw new InvalidRequest('redirect_uri is required because the client registered several (RFC 6749 §3.1.2.3)');
    }
    ctx.redirectUri = registered[0]!;
    ctx.redirectUriGiven = false;
    return;
  }
  if (typeof raw !== 'string' || !registered.includes(raw)) {
    throw new InvalidRequest('redirect_uri does not exactly match a registered redirect URI (RFC 6749 §3.1.2.3, RFC 9700 §4.1.3)');
  }
  ctx.redirectUri = raw;
  ctx.redirectUriGiven = true;
};
