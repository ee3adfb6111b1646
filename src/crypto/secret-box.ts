// Webhook secrets must be sent back verbatim (X-Signature), so they cannot be
// hashed: they are sealed with AES-256-GCM under SECRET_KEY. The organization
// id is the associated data, so a sealed secret copied onto another
// organization's row does not open. The same box, with its own purpose in the
// associated data, seals a rotated refresh token's successor during
// REFRESH_REUSE_GRACE (src/oauth/successor-seal.ts); one purpose's
// ciphertext never opens as another's.
//
// Layout: version byte (1) | 12-byte IV | 16-byte tag | ciphertext. It names
// no key: a reader tries SECRET_KEY, then each SECRET_KEY_PREVIOUS in order
// (docs/decisions.md, "Key rotation").
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { asKeyRing, type KeyRing } from './key-ring.ts';

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Sealed under none of the keys (or altered, or another context's): what to do is in the message. */
export class UnreadableSealError extends Error {
  override name = 'UnreadableSealError';
}

export interface SecretBox {
  seal(secret: string, context: string): Buffer;
  /** Under SECRET_KEY first (all that was sealed since the last rotation: one decryption), then each previous key. */
  open(sealed: Buffer, context: string): string;
  /** True when SECRET_KEY opens it, false when only a previous key does. */
  isCurrent(sealed: Buffer, context: string): boolean;
  /** `sealed` sealed again under SECRET_KEY; undefined when SECRET_KEY already opens it. */
  reseal(sealed: Buffer, context: string): Buffer | undefined;
}

export type SecretPurpose = 'webhook-secret' | 'refresh-token';

/** `context` is what the ciphertext belongs to: the organization for a webhook secret, the successor's row id for a refresh token. */
export function createSecretBox(keys: KeyRing | Buffer, purpose: SecretPurpose = 'webhook-secret'): SecretBox {
  const ring = asKeyRing(keys);
  const associatedData = (context: string) => Buffer.from(`switchboard:${purpose}:${context}`, 'utf8');
  const openWith = (key: Buffer, sealed: Buffer, context: string): string | undefined => {
    const iv = sealed.subarray(1, 1 + IV_BYTES);
    const tag = sealed.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAAD(associatedData(context));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(sealed.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  };
  /** The plaintext, and whether SECRET_KEY opened it. */
  const openAny = (sealed: Buffer, context: string): { secret: string; current: boolean } => {
    if (sealed.length < 1 + IV_BYTES + TAG_BYTES || sealed[0] !== VERSION) throw new UnreadableSealError('unknown sealed secret format');
    const secret = openWith(ring.current, sealed, context);
    if (secret !== undefined) return { secret, current: true };
    for (const key of ring.previous) {
      const older = openWith(key, sealed, context);
      if (older !== undefined) return { secret: older, current: false };
    }
    throw new UnreadableSealError(
      'it opens under neither SECRET_KEY nor any key of SECRET_KEY_PREVIOUS: add the key it was sealed under to SECRET_KEY_PREVIOUS',
    );
  };
  const seal = (secret: string, context: string): Buffer => {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', ring.current, iv);
    cipher.setAAD(associatedData(context));
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), ciphertext]);
  };
  return {
    seal,
    open: (sealed, context) => openAny(sealed, context).secret,
    isCurrent: (sealed, context) => openAny(sealed, context).current,
    reseal(sealed, context) {
      const { secret, current } = openAny(sealed, context);
      return current ? undefined : seal(secret, context);
    },
  };
}
