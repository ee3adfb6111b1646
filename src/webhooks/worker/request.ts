// The headers of a call.completed delivery (docs/interface.md §6.1). The body
// is the stored event text, sent byte for byte on every attempt.
import { VERSION } from '../../version.ts';
import type { SecretFormat } from '../signing-secret.ts';
import { standardWebhookHeaders } from './sign.ts';

export const USER_AGENT = `Switchboard-Webhooks/${VERSION}`;

export interface DeliveryHeadersInput {
  deliveryId: string;
  attempt: number;
  event: string;
  body: string;
  /** The subscription's secret, when one was given, and the rule that keys its signature. */
  secret: { text: string; format: SecretFormat } | undefined;
  /** Unix seconds of this attempt. */
  timestamp: number;
  /** W3C trace context of this attempt (attempt-trace.ts). */
  traceparent?: string | undefined;
  tracestate?: string | undefined;
}

export function deliveryHeaders(input: DeliveryHeadersInput): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-event': input.event,
    'x-delivery-id': input.deliveryId,
    'x-delivery-attempt': String(input.attempt),
  };
  if (input.traceparent !== undefined) headers.traceparent = input.traceparent;
  if (input.tracestate !== undefined) headers.tracestate = input.tracestate;
  if (input.secret !== undefined) {
    // A shared-secret echo (docs/interface.md §6.2), then the Standard Webhooks HMAC over the same id and body.
    headers['x-signature'] = input.secret.text;
    Object.assign(
      headers,
      standardWebhookHeaders({
        id: input.deliveryId,
        timestamp: input.timestamp,
        body: input.body,
        secret: input.secret.text,
        format: input.secret.format,
      }),
    );
  }
  return headers;
}
