// The web UI's session: the same user_sessions row and token kind as an
// x-user-token, carried in an HttpOnly, SameSite=Lax cookie that is Secure
// whenever BASE_URL is https (docs/interface.md §14).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ActiveSession } from '../auth/sessions.queries.ts';
import { resolveSession } from '../auth/sessions.service.ts';
import type { Config } from '../config/config.ts';
import { USER_TOKEN_MAX_LENGTH } from '../auth/tokens.ts';

export const SESSION_COOKIE = 'sb_session';

export function isSecureDeployment(config: Config): boolean {
  return config.baseUrl.startsWith('https:');
}

/**
 * Over https a cookie's name carries the `__Host-` prefix: browsers then accept
 * it only when Secure, for path /, with no Domain, so a sibling subdomain cannot
 * plant or overwrite it (which would defeat the CSRF cookie). Plain-http
 * development cannot use the prefix and keeps the bare name.
 */
export function cookieName(config: Config, name: string): string {
  return isSecureDeployment(config) ? `__Host-${name}` : name;
}

export async function webSession(request: FastifyRequest): Promise<ActiveSession | undefined> {
  const token = request.cookies[cookieName(request.server.config, SESSION_COOKIE)];
  if (typeof token !== 'string' || token.length === 0 || token.length > USER_TOKEN_MAX_LENGTH) return undefined;
  return resolveSession(request.server.db, request.server.caches, token);
}

export function setSessionCookie(reply: FastifyReply, config: Config, token: string, expiresAt: Date): void {
  reply.setCookie(cookieName(config, SESSION_COOKIE), token, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: isSecureDeployment(config),
    expires: expiresAt,
  });
}

export function clearSessionCookie(reply: FastifyReply, config: Config): void {
  reply.clearCookie(cookieName(config, SESSION_COOKIE), { path: '/', httpOnly: true, sameSite: 'lax', secure: isSecureDeployment(config) });
}

/**
 * Where to go after logging in: a path on this site only. "//evil.example"
 * and "/\evil.example" are protocol-relative to browsers, so they are refused.
 * Characters outside printable ASCII are percent-encoded (as a browser would
 * send them): a Location header cannot carry them, and Node refuses to write
 * one that does, which turned a crafted link into a 500 after signing in.
 */
export function safeReturnTo(value: unknown, fallback = '/'): string {
  if (typeof value !== 'string' || value.length > 4000) return fallback;
  if (!value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) return fallback;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this rejects.
  if (/[\u0000-\u001f\u007f\\]/.test(value)) return fallback;
  try {
    return value.replace(/[^\u0021-\u007e]+/g, encodeURIComponent);
  } catch {
    // A lone surrogate has no UTF-8 form.
    return fallback;
  }
}

/** /login?return_to=… for a request that needs a signed-in user. */
export function loginUrl(returnTo: string): string {
  return `/login?${new URLSearchParams({ return_to: returnTo })}`;
}
