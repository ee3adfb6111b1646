// Bearer credentials: 256 random bits, shown once, stored only as SHA-256.
// A short prefix tells a reader (and secret scanners) what kind of token it is.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
export function generateToken(prefix) {
    return `${prefix}_${randomBytes(32).toString('base64url')}`;
}
export function hashToken(token) {
    return createHash('sha256').update(token, 'utf8').digest();
}
/** Constant-time comparison of two secrets of any length (hash first so lengths match). */
export function secretsEqual(a, b) {
    return timingSafeEqual(hashToken(a), hashToken(b));
}
//# sourceMappingURL=tokens.js.map