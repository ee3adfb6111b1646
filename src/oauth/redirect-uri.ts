// Which redirect URIs a client may register (RFC 6749 §3.1.2, RFC 9700 §2.1):
// absolute, no fragment, no user-info, HTTPS, or plain HTTP only to a loopback
// host for local development (RFC 8252 §7.3). Matching at run time is exact
// string comparison (RFC 9700 §4.1.3), so nothing is normalised here either.
import { urlCharacterProblem } from '../url-characters.ts';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export const MAX_REDIRECT_URI_LENGTH = 2000;

/** A plain-http redirect to the machine itself (RFC 8252 §7.3), the kind native apps use. */
export function isLoopbackRedirect(uri: string): boolean {
  try {
    const url = new URL(uri);
    return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
  } catch {
    return false;
  }
}

/** Why a redirect URI cannot be registered, or undefined when it can. */
export function redirectUriProblem(uri: string): string | undefined {
  if (uri.length > MAX_REDIRECT_URI_LENGTH) return `is longer than ${MAX_REDIRECT_URI_LENGTH} characters`;
  // Before parsing, which would drop CR, LF and TAB from a URI stored as given.
  const characters = urlCharacterProblem(uri);
  if (characters) return characters;
  let parsed: URL;
  try {
    parsed = new URL(uri);
  } catch {
    return 'is not an absolute URL';
  }
  if (uri.includes('#')) return 'must not contain a fragment (RFC 6749 §3.1.2)';
  if (parsed.username || parsed.password) return 'must not contain user-info';
  if (parsed.protocol === 'https:') return undefined;
  if (parsed.protocol === 'http:' && LOOPBACK_HOSTS.has(parsed.hostname)) return undefined;
  return 'must use https (plain http only for localhost, 127.0.0.1 or [::1])';
}
