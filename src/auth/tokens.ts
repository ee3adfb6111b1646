// Bearer credentials: 256 random bits, shown once, stored only as SHA-256.
// A short prefix tells a reader (and secret scanners) what kind of token it is.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export type TokenPrefix = 'sbu' | 'sba' | 'sbr' | 'sbc' | 'sbs';

export function generateToken(prefix: TokenPrefix): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Constant-time comparison of two secrets of any length (hash first so lengths match). */
export function secretsEqual(a: string, b: string): boolean {
  return timingSafeEqual(hashToken(a), hashToken(b));
}
