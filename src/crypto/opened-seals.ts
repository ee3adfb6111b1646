// A secret box that remembers what it opened. The worker opens a
// subscription's sealed secret on every attempt, and the same few sealed
// secrets over and over: the AES-GCM decryption, with its key set up again
// each time, was about a twelfth of the worker's CPU per delivery
// (bench:delivery, burst). The process that opens them holds SECRET_KEY
// already, so remembering the plaintext exposes nothing it could not read.
//
// An entry is found by the context and the seal's IV and tag, and used only
// when the whole sealed value is the same bytes: a secret sealed again (a
// rotation, `switchboard rekey`) or changed is a new value and opened afresh.
import type { SecretBox } from './secret-box.ts';

/** Enough for every subscription a busy worker serves; past it the oldest entry goes. */
export const DEFAULT_MAX_ENTRIES = 10_000;
/** Version byte, IV and tag: unique per sealing. */
const HEADER_BYTES = 1 + 12 + 16;

export function rememberOpenedSeals(box: SecretBox, maxEntries = DEFAULT_MAX_ENTRIES): SecretBox {
  const opened = new Map<string, { sealed: Buffer; secret: string }>();
  return {
    ...box,
    open(sealed, context) {
      const key = `${context}\u0000${sealed.toString('latin1', 0, HEADER_BYTES)}`;
      const hit = opened.get(key);
      if (hit?.sealed.equals(sealed)) return hit.secret;
      const secret = box.open(sealed, context);
      if (opened.size >= maxEntries) opened.delete(opened.keys().next().value!);
      opened.set(key, { sealed: Buffer.from(sealed), secret });
      return secret;
    },
  };
}
