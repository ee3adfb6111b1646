// The headers of a call.completed delivery (DESIGN §5 "Delivery"). The body
// is the stored event text, sent byte for byte on every attempt.
import { readFileSync } from 'node:fs';
import { standardWebhookHeaders } from './sign.js';
const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'));
export const USER_AGENT = `Switchboard-Webhooks/${version}`;
export function deliveryHeaders(input) {
    const headers = {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'x-event': input.event,
        'x-delivery-id': input.deliveryId,
        'x-delivery-attempt': String(input.attempt),
    };
    if (input.secret !== undefined) {
        // A shared-secret echo (interface §6), then the Standard Webhooks HMAC over the same id and body.
        headers['x-signature'] = input.secret;
        Object.assign(headers, standardWebhookHeaders({ id: input.deliveryId, timestamp: input.timestamp, body: input.body, secret: input.secret }));
    }
    return headers;
}
//# sourceMappingURL=request.js.map