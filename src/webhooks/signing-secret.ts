// Which key a subscription's secret gives webhook-signature (docs/interface.md
// §6.2, docs/decisions.md "Signing keys"). A secret of the Standard Webhooks
// form, `whsec_` then base64, is keyed with the decoded bytes, as the Standard
// Webhooks libraries read it; any other secret with its own UTF-8 bytes, as
// every subscription made before the `whsec_` rule still is (the subscription
// records its rule: webhook_subscriptions.secret_format).

export type SecretFormat = 'plain' | 'whsec';

export const WHSEC_PREFIX = 'whsec_';
/** The key sizes the Standard Webhooks specification asks for. */
export const WHSEC_MIN_BYTES = 24;
export const WHSEC_MAX_BYTES = 64;

// Padded standard base64, the one form every Standard Webhooks library decodes
// alike (Node's own decoder would also take URL-safe letters, missing padding
// and stray characters, and sign with a key the receiver's library refuses).
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export type SecretCheck = { ok: true; format: SecretFormat } | { ok: false; message: string };

/** The rule a secret given now follows, or why a `whsec_` secret cannot be used. */
export function checkSecret(secret: string): SecretCheck {
  if (!secret.startsWith(WHSEC_PREFIX)) return { ok: true, format: 'plain' };
  const rest = secret.slice(WHSEC_PREFIX.length);
  if (!BASE64.test(rest)) {
    return { ok: false, message: 'starting with whsec_ must continue with standard base64 (A-Z a-z 0-9 + /, padded with =)' };
  }
  const bytes = Buffer.from(rest, 'base64').length;
  if (bytes < WHSEC_MIN_BYTES || bytes > WHSEC_MAX_BYTES) {
    return {
      ok: false,
      message: `starting with whsec_ must continue with the base64 of a ${WHSEC_MIN_BYTES} to ${WHSEC_MAX_BYTES} byte key (this one is ${bytes})`,
    };
  }
  return { ok: true, format: 'whsec' };
}

/** The HMAC key of webhook-signature for a stored secret and the rule it was stored with. */
export function signingKey(secret: string, format: SecretFormat): Buffer {
  // A 'whsec' row's secret always starts with whsec_ when this release stored it; only a 0.1.0
  // process replacing the secret during a rolling restart (it leaves the rule as it was) can break
  // that, and it meant today's rule.
  if (format === 'whsec' && secret.startsWith(WHSEC_PREFIX)) return Buffer.from(secret.slice(WHSEC_PREFIX.length), 'base64');
  return Buffer.from(secret, 'utf8');
}
