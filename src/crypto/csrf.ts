// CSRF protection for every form (docs/interface.md §14): a random value in an HttpOnly
// SameSite=Lax cookie, and in each form an HMAC of it keyed with SECRET_KEY.
// A cross-site page can neither read the cookie nor compute the HMAC, and
// SameSite=Lax keeps the session cookie off cross-site POSTs as well.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

export const CSRF_COOKIE = 'sb_csrf';
const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;

export interface Csrf {
  /** The token for a form on this response (setting the cookie when the browser has none yet). */
  token(request: FastifyRequest, reply: FastifyReply): string;
  /** True when the submitted form token belongs to the browser's cookie. */
  verify(request: FastifyRequest, submitted: unknown): boolean;
}

/** `cookie`: the cookie's name on this deployment (prefixed over https) and whether it is Secure. */
export function createCsrf(secretKey: Buffer, cookie: { name: string; secure: boolean }): Csrf {
  const key = createHmac('sha256', secretKey).update('switchboard csrf v1').digest();
  const sign = (value: string) => createHmac('sha256', key).update(value).digest('base64url');
  const { name, secure } = cookie;
  const cookieOf = (request: FastifyRequest) => {
    const value = request.cookies[name];
    return typeof value === 'string' && COOKIE_VALUE.test(value) ? value : undefined;
  };
  return {
    token(request, reply) {
      let value = cookieOf(request);
      if (!value) {
        value = randomBytes(32).toString('base64url');
        // Remembered for this request too, so a page rendered twice uses one value.
        request.cookies[name] = value;
        reply.setCookie(name, value, { path: '/', httpOnly: true, sameSite: 'lax', secure });
      }
      return sign(value);
    },
    verify(request, submitted) {
      const value = cookieOf(request);
      if (!value || typeof submitted !== 'string') return false;
      const expected = Buffer.from(sign(value));
      const given = Buffer.from(submitted);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}
