// Standard Webhooks signature headers (docs/interface.md §6.2). The key is the UTF-8 bytes
// of the subscriber's secret as given, not a `whsec_` base64 key: verifiers
// built with the Standard Webhooks libraries take base64(secret) as their key.
import { createHmac } from 'node:crypto';

export interface StandardWebhookInput {
  /** Stable message id (the delivery id): the same on every retry. */
  id: string;
  /** Unix time in seconds of this attempt. */
  timestamp: number;
  /** The exact request body bytes, as a string. */
  body: string;
  secret: string;
}

export interface StandardWebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

export function standardWebhookSignature({ id, timestamp, body, secret }: StandardWebhookInput): string {
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64');
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
