// Bearer credentials: 256 random bits, shown once, stored only as SHA-256.
// A short prefix tells a reader (and secret scanners) what kind of token it is.
import crypto, { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export type TokenPrefix = 'sbu' | 'sba' | 'sbr' | 'sbc' | 'sbs';

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
