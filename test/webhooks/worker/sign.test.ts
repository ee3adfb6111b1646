import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { standardWebhookHeaders } from '../../../src/webhooks/worker/sign.ts';

const body = JSON.stringify({ id: 'c0a8f7e2-0000-4000-8000-000000000001', summary: 'Caller booked a visit — “urgent” ✓' });
const secret = 'zap-secret with spaces & symbols !~';
const now = () => Math.floor(Date.now() / 1000);

// The Standard Webhooks libraries take a base64 key; ours is the secret's own UTF-8 bytes.
const verifierFor = (key: string) => new Webhook(Buffer.from(key, 'utf8').toString('base64'));

describe('Standard Webhooks signature headers', () => {
  test('verify with the standardwebhooks package keyed with the secret bytes', () => {
    const headers = standardWebhookHeaders({ id: 'msg_1', timestamp: now(), body, secret, format: 'plain' });
    assert.deepEqual(verifierFor(secret).verify(body, { ...headers }), JSON.parse(body));
    assert.deepEqual(new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' }).verify(body, { ...headers }), JSON.parse(body));
  });

  test('carry the id and the timestamp in seconds, and match the reference signer', () => {
    const timestamp = now();
    const headers = standardWebhookHeaders({ id: 'msg_2', timestamp, body, secret, format: 'plain' });
    assert.equal(headers['webhook-id'], 'msg_2');
    assert.equal(headers['webhook-timestamp'], String(timestamp));
    assert.match(headers['webhook-signature'], /^v1,[A-Za-z0-9+/]{43}=$/);
    assert.equal(headers['webhook-signature'], verifierFor(secret).sign('msg_2', new Date(timestamp * 1000), body));
  });

  test('do not verify for another secret, body, id or timestamp', () => {
    const timestamp = now();
    const headers = standardWebhookHeaders({ id: 'msg_3', timestamp, body, secret, format: 'plain' });
    assert.throws(() => verifierFor('another secret').verify(body, { ...headers }), WebhookVerificationError);
    assert.throws(() => verifierFor(secret).verify(`${body} `, { ...headers }), WebhookVerificationError);
    assert.throws(() => verifierFor(secret).verify(body, { ...headers, 'webhook-id': 'msg_4' }), WebhookVerificationError);
    assert.throws(
      () => verifierFor(secret).verify(body, { ...headers, 'webhook-timestamp': String(timestamp - 1) }),
      WebhookVerificationError,
    );
  });

  test('a whsec secret is keyed with its decoded base64: the library verifies with the secret as given, not with its bytes', () => {
    const whsec = `whsec_${Buffer.from('0123456789abcdef01234567').toString('base64')}`;
    const headers = standardWebhookHeaders({ id: 'msg_6', timestamp: now(), body, secret: whsec, format: 'whsec' });
    assert.deepEqual(new Webhook(whsec).verify(body, { ...headers }), JSON.parse(body));
    assert.throws(() => verifierFor(whsec).verify(body, { ...headers }), WebhookVerificationError);
    // The same text stored under the plain rule (a subscription made before the whsec rule) keeps today's key.
    const plain = standardWebhookHeaders({ id: 'msg_6', timestamp: now(), body, secret: whsec, format: 'plain' });
    assert.deepEqual(verifierFor(whsec).verify(body, { ...plain }), JSON.parse(body));
    assert.throws(() => new Webhook(whsec).verify(body, { ...plain }), WebhookVerificationError);
  });

  test('reject a timestamp that is not whole seconds', () => {
    assert.throws(() => standardWebhookHeaders({ id: 'msg_5', timestamp: Date.now() / 1000, body, secret, format: 'plain' }), TypeError);
  });
});
