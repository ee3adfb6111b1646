// Bearer credentials: 256 random bits, shown once, stored only as SHA-256.
// A short prefix tells a reader (and secret scanners) what kind of token it is.
import crypto, { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export type TokenPrefix = 'sbu' | 'sba' | 'sbr' | 'sbc' | 'sbs';

/*
 * The longest credential a request may present; anything longer is refused
 * before it is hashed or looked up. Ours are 47 characters (a prefix, `_` and
 * 43 of base64url), so a far longer one is not ours, and a client cannot make
 * the server hash megabytes.
 */
/** An OAuth access or refresh token (the platform guard, the token and revocation endpoints). */
export const OAUTH_TOKEN_MAX_LENGTH = 512;
/** An x-user-token or the web session cookie. */
export const USER_TOKEN_MAX_LENGTH = 256;
/** A client secret. */
export const CLIENT_SECRET_MAX_LENGTH = 500;
/** A client id. */
export const CLIENT_ID_MAX_LENGTH = 200;

export function generateToken(prefix: TokenPrefix): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}

// crypto.hash (Node 20.12+) is the one-shot form: every authenticated request
// hashes one or two credentials. Older Node 20 releases take the stream form.
const oneShot = typeof crypto.hash === 'function' ? crypto.hash : undefined;

export function hashToken(token: string): Buffer {
  return oneShot ? oneShot('sha256', token, 'buffer') : createHash('sha256').update(token, 'utf8').digest();
}

/** Constant-time comparison of two secrets of any length (hash first so lengths match). */
export function secretsEqual(a: string, b: string): boolean {
  return timingSafeEqual(hashToken(a), hashToken(b));
}
