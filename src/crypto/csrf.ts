// CSRF protection for every form (docs/interface.md §14): a random value in an HttpOnly
// SameSite=Lax cookie, and in each form an HMAC of it keyed with SECRET_KEY.
// A cross-site page can neither read the cookie nor compute the HMAC, and
// SameSite=Lax keeps the session cookie off cross-site POSTs as well.
// Forms rendered under a key of SECRET_KEY_PREVIOUS still verify, so a form
// opened before a rotation posts until its key is removed (docs/decisions.md).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { asKeyRing, type KeyRing } from './key-ring.ts';

export const CSRF_COOKIE = 'sb_csrf';
const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;

export interface Csrf {
  /** The token for a form on this response (setting the cookie when the browser has none yet). */
  token(request: FastifyRequest, reply: FastifyReply): string;
  /** True when the submitted form token belongs to the browser's cookie. */
  verify(request: FastifyRequest, submitted: unknown): boolean;
}

/** `cookie`: the cookie's name on this deployment (prefixed over https) and whether it is Secure. */
export function createCsrf(secretKeys: KeyRing | Buffer, cookie: { name: string; secure: boolean }): Csrf {
  const ring = asKeyRing(secretKeys);
  const derive = (secretKey: Buffer) => createHmac('sha256', secretKey).update('switchboard csrf v1').digest();
  const key = derive(ring.current);
  const previous = ring.previous.map(derive);
  const signWith = (hmacKey: Buffer, value: string) => createHmac('sha256', hmacKey).update(value).digest('base64url');
  const sign = (value: string) => signWith(key, value);
  const matches = (given: Buffer, expected: string) => {
    const wanted = Buffer.from(expected);
    return given.length === wanted.length && timingSafeEqual(given, wanted);
  };
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
      const given = Buffer.from(submitted);
      return matches(given, sign(value)) || previous.some((older) => matches(given, signWith(older, value)));
    },
  };
}
