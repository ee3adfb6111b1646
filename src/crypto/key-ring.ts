// SECRET_KEY and the keys it replaced (SECRET_KEY_PREVIOUS). What is sealed or
// signed now uses `current`; what an older key sealed or signed still opens
// or verifies, so a rotation breaks nothing, until `switchboard rekey` has
// re-encrypted the sealed values and the old key is dropped.
export interface KeyRing {
  readonly current: Buffer;
  /** Tried after `current`, in order; never used to seal or sign. */
  readonly previous: readonly Buffer[];
}

/** A key listed twice (or the current key again in the previous ones) is tried once. */
export function keyRing(current: Buffer, previous: readonly Buffer[] = []): KeyRing {
  for (const key of [current, ...previous]) if (key.length !== 32) throw new Error('the secret key must be 32 bytes');
  const distinct = previous.filter((key, index) => !key.equals(current) && previous.findIndex((other) => other.equals(key)) === index);
  return { current, previous: distinct };
}

/** A Buffer is a ring of that one key. */
export function asKeyRing(keys: KeyRing | Buffer): KeyRing {
  return Buffer.isBuffer(keys) ? keyRing(keys) : keys;
}
