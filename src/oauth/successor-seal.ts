// A rotated refresh token keeps its successor sealed under SECRET_KEY during
// REFRESH_REUSE_GRACE, so a replay gets that same successor and the chain
// never forks. The successor's own row id is the associated data: the caller
// generates it before the presented token is read, so the rotation is one
// statement (app_refresh_exchange), and a ciphertext copied
// onto another chain's row does not open, as the reader names the successor
// it expects.
import { type SecretBox, UnreadableSealError } from '../crypto/secret-box.ts';

export function sealSuccessor(box: SecretBox, refreshToken: string, successorId: string): Buffer {
  return box.seal(refreshToken, successorId);
}

/** Undefined when no key opens it (SECRET_KEY changed without its old key in SECRET_KEY_PREVIOUS). */
export function openSuccessor(box: SecretBox, sealed: Buffer, successorId: string): string | undefined {
  try {
    return box.open(sealed, successorId);
  } catch (error) {
    if (error instanceof UnreadableSealError) return undefined;
    throw error;
  }
}
