// Webhook secrets must be sent back verbatim (X-Signature), so they cannot be
// hashed: they are sealed with AES-256-GCM under SECRET_KEY. The organization
// id is the associated data, so a sealed secret copied onto another
// organization's row does not open. The same box, with its own purpose in the
// associated data, seals a rotated refresh token's successor during
// REFRESH_REUSE_GRACE (src/oauth/successor-seal.ts); one purpose's
// ciphertext never opens as another's.
//
// Layout: version byte (1) | 12-byte IV | 16-byte tag | ciphertext.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface SecretBox {
  seal(secret: string, context: string): Buffer;
  open(sealed: Buffer, context: string): string;
}

export type SecretPurpose = 'webhook-secret' | 'refresh-token';

/** `context` is what the ciphertext belongs to: the organization for a webhook secret, the successor's row id for a refresh token. */
export function createSecretBox(key: Buffer, purpose: SecretPurpose = 'webhook-secret'): SecretBox {
  const associatedData = (context: string) => Buffer.from(`switchboard:${purpose}:${context}`, 'utf8');
  if (key.length !== 32) throw new Error('the secret key must be 32 bytes');
  return {
    seal(secret, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(associatedData(context));
      const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), ciphertext]);
    },
    open(sealed, context) {
      if (sealed.length < 1 + IV_BYTES + TAG_BYTES || sealed[0] !== VERSION) throw new Error('unknown sealed secret format');
      const iv = sealed.subarray(1, 1 + IV_BYTES);
      const tag = sealed.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
      const decipher = createDecipheriv('aes-256-gcm', key, iv);
      decipher.setAAD(associatedData(context));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(sealed.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    },
  };
}
