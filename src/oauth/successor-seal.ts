// A rotated refresh token keeps its successor sealed under SECRET_KEY during
// REFRESH_REUSE_GRACE, so a replay gets that same successor and the chain
// never forks (security review item 2). Two formats, told apart by the first
// byte:
//   0x01…  the secret box's own layout, the grant as associated data (sealed
//          before migration 0014; openable until housekeeping forgets it)
//   0x02…  a marker, then the box's layout with the successor's own row id as
//          associated data: known before the presented token is read, so the
//          rotation is one statement (app_refresh_exchange, migration 0014)
// Either way a ciphertext copied onto another chain's row does not open: the
// reader names the grant and the successor it expects.
import type { SecretBox } from '../webhooks/secret-box.ts';

const BOUND_TO_SUCCESSOR = 0x02;

export function sealSuccessor(box: SecretBox, refreshToken: string, successorId: string): Buffer {
  const sealed = box.seal(refreshToken, `successor:${successorId}`);
  const marked = Buffer.allocUnsafe(sealed.length + 1);
  marked[0] = BOUND_TO_SUCCESSOR;
  sealed.copy(marked, 1);
  return marked;
}

export function openSuccessor(box: SecretBox, sealed: Buffer, owner: { grantId: string; successorId: string }): string {
  if (sealed[0] === BOUND_TO_SUCCESSOR) return box.open(sealed.subarray(1), `successor:${owner.successorId}`);
  return box.open(sealed, owner.grantId);
}
