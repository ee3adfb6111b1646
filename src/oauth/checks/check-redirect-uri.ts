// RFC 6749 §3.1.2.3 and RFC 9700 §4.1.3: the redirect URI must equal one the
// client registered, compared as exact strings. It may be omitted only when the
// client registered exactly one. A mismatch is shown on an error page and never
// redirected (RFC 6749 §4.1.2.1), or the server would be an open redirector.
// RFC 8252 §7.3: for a public (native) client's loopback http redirect, the
// port is not compared — the app picks a free one each time it runs. Platform
// clients keep exact matching.
import { InvalidRequest } from '../oauth.errors.ts';
import { isPublicKind } from '../public-clients/audience.ts';
import { isLoopbackRedirect } from '../redirect-uri.ts';
import { established, type AuthorizationCheck } from './context.ts';

/** The URI without its port, for RFC 8252 §7.3 matching of loopback redirects. */
function withoutPort(uri: string): string {
  const url = new URL(uri);
  url.port = '';
  return url.href;
}

export function redirectUriMatches(registered: readonly string[], given: string, isPublic: boolean): boolean {
  if (registered.includes(given)) return true;
  if (!isPublic || !isLoopbackRedirect(given)) return false;
  const portless = withoutPort(given);
  return registered.some((uri) => isLoopbackRedirect(uri) && withoutPort(uri) === portless);
}

export const checkRedirectUri: AuthorizationCheck = function checkRedirectUri(ctx) {
  const client = established(ctx.client, 'check-client');
  const registered = client.redirect_uris;
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
  const isPublic = isPublicKind(client.kind);
  if (typeof raw !== 'string' || !redirectUriMatches(registered, raw, isPublic)) {
    throw new InvalidRequest(
      isPublic
        ? 'redirect_uri does not match a registered redirect URI; only a loopback redirect’s port may differ (RFC 6749 §3.1.2.3, RFC 8252 §7.3)'
        : 'redirect_uri does not exactly match a registered redirect URI (RFC 6749 §3.1.2.3, RFC 9700 §4.1.3)',
    );
  }
  ctx.redirectUri = raw;
  ctx.redirectUriGiven = true;
};
