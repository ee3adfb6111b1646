// Standard Webhooks signature headers (DESIGN §5). The key is the UTF-8 bytes
// of the subscriber's secret as given, not a `whsec_` base64 key: verifiers
// built with the Standard Webhooks libraries take base64(secret) as their key.
import { createHmac } from 'node:crypto';
export function standardWebhookSignature({ id, timestamp, body, secret }) {
    const mac = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64');
    return `v1,${mac}`;
}
export function standardWebhookHeaders(input) {
    if (!Number.isSafeInteger(input.timestamp))
        throw new TypeError('timestamp must be whole seconds');
    return {
        'webhook-id': input.id,
        'webhook-timestamp': String(input.timestamp),
        'webhook-signature': standardWebhookSignature(input),
    };
}
//# sourceMappingURL=sign.js.map