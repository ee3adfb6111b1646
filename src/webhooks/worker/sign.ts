// Standard Webhooks signature headers (docs/interface.md §6.2). The key comes
// from the subscription's secret by the rule the subscription records
// (../signing-secret.ts): the decoded base64 of a `whsec_` secret, else the
// secret's own UTF-8 bytes.
import { createHmac } from 'node:crypto';
import { signingKey, type SecretFormat } from '../signing-secret.ts';

export interface StandardWebhookInput {
  /** Stable message id (the delivery id): the same on every retry. */
  id: string;
  /** Unix time in seconds of this attempt. */
  timestamp: number;
  /** The exact request body bytes, as a string. */
  body: string;
  secret: string;
  /** The rule the subscription's secret follows (webhook_subscriptions.secret_format). */
  format: SecretFormat;
}

export interface StandardWebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

export function standardWebhookSignature({ id, timestamp, body, secret, format }: StandardWebhookInput): string {
  const mac = createHmac('sha256', signingKey(secret, format)).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64');
  return `v1,${mac}`;
}

export function standardWebhookHeaders(input: StandardWebhookInput): StandardWebhookHeaders {
  if (!Number.isSafeInteger(input.timestamp)) throw new TypeError('timestamp must be whole seconds');
  return {
    'webhook-id': input.id,
    'webhook-timestamp': String(input.timestamp),
    'webhook-signature': standardWebhookSignature(input),
  };
}
