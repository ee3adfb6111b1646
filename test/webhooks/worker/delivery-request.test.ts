import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { startHttpsTarget, type HttpsTarget } from '../../helpers/https-target.ts';
import type { TestApp } from '../../helpers/app.ts';
import {
  completeCall,
  deliveriesOf,
  connectPlatform,
  settled,
  startDeliveryRig,
  type DeliveryRig,
  subscribeHook,
  type Connection,
} from '../../helpers/webhooks.ts';

const { version } = (await import('../../../package.json', { with: { type: 'json' } })).default as { version: string };

describe('the call.completed delivery request', () => {
  let t: TestApp;
  let target: HttpsTarget;
  let rig: DeliveryRig;
  let connection: Connection;

  before(async () => {
    rig = await startDeliveryRig();
    ({ t, target } = rig);
    connection = await connectPlatform(t);
  });
  after(() => rig.close());

  test('body is exactly the completed call and headers are exactly docs/interface.md §6.1, with a secret', async () => {
    const secret = 'zap-shared secret!~';
    const hook = await subscribeHook(t, connection, { hookUrl: `${target.url}/hooks/signed?zap=1`, secret });
    const agent = await t.db.pool.query<{ id: string }>("INSERT INTO agents (organization_id, name) VALUES ($1, 'Ava') RETURNING id", [
      connection.member.org.id,
    ]);
    const call = await completeCall(t, connection.member, {
      summary: 'Booked — “Tuesday” ✓',
      duration_seconds: 317,
      agent_id: agent.rows[0]!.id,
    });
    const [request] = await target.waitForRequests(1);
    assert.ok(request);

    assert.equal(request.method, 'POST');
    assert.equal(request.url, '/hooks/signed?zap=1');
    const { url, ...body } = JSON.parse(request.body);
    assert.deepEqual(body, {
      id: call.id,
      organization_id: connection.member.org.id,
      created_at: call.created_at,
      summary: 'Booked — “Tuesday” ✓',
      duration_seconds: 317,
      agent_id: agent.rows[0]!.id,
      direction: null,
      from_number: null,
      to_number: null,
      agent_name: 'Ava',
      location_id: null,
      location_name: null,
      recording_url: null,
      transcript: null,
      metadata: {},
    });
    assert.match(url, new RegExp(`/ui/calls/${call.id}$`));
    // The seed's six fields first, in their order, then the ones added since (interface §2.3).
    assert.deepEqual(Object.keys(JSON.parse(request.body)), [
      'id',
      'organization_id',
      'created_at',
      'summary',
      'duration_seconds',
      'agent_id',
      'direction',
      'from_number',
      'to_number',
      'agent_name',
      'location_id',
      'location_name',
      'recording_url',
      'transcript',
      'metadata',
      'url',
    ]);
    assert.match(JSON.parse(request.body).created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const [delivery] = await settled(t, hook.id, 1);
    assert.equal(request.headers['content-type'], 'application/json');
    assert.equal(request.headers['x-event'], 'call.completed');
    assert.equal(request.headers['x-signature'], secret);
    assert.equal(request.headers['x-delivery-id'], delivery!.id);
    assert.equal(request.headers['x-delivery-attempt'], '1');
    assert.equal(request.headers['user-agent'], `Switchboard-Webhooks/${version}`);
    assert.equal(request.headers['webhook-id'], delivery!.id);
    assert.match(String(request.headers['webhook-timestamp']), /^\d{10}$/);
    assert.ok(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000) < 60);
    assert.match(String(request.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+=*$/);
    const unexpected = Object.keys(request.headers).filter(
      (name) =>
        ![
          'host',
          'connection',
          'content-length',
          'content-type',
          'x-event',
          'x-signature',
          'x-delivery-id',
          'x-delivery-attempt',
          'user-agent',
          'webhook-id',
          'webhook-timestamp',
          'webhook-signature',
          'traceparent',
        ].includes(name),
    );
    assert.deepEqual(unexpected, []);
  });

  test('webhook-signature verifies with the standardwebhooks package', async () => {
    const secret = 'standard-webhooks-secret';
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `${target.url}/hooks/verify`, secret });
    const call = await completeCall(t, org.member);
    await settled(t, hook.id, 1);
    const request = target.requests.find((r) => r.url === '/hooks/verify');
    assert.ok(request);
    const verifier = new Webhook(Buffer.from(secret, 'utf8').toString('base64'));
    const payload = verifier.verify(request.body, {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    }) as { id: string };
    assert.equal(payload.id, call.id);
    const forged = new Webhook(Buffer.from('another secret', 'utf8').toString('base64'));
    assert.throws(() =>
      forged.verify(request.body, {
        'webhook-id': String(request.headers['webhook-id']),
        'webhook-timestamp': String(request.headers['webhook-timestamp']),
        'webhook-signature': String(request.headers['webhook-signature']),
      }),
    );
  });

  test('without a secret there is no X-Signature and no Standard Webhooks headers', async () => {
    const other = await connectPlatform(t);
    const hook = await subscribeHook(t, other, { hookUrl: `${target.url}/hooks/plain` });
    const call = await completeCall(t, other.member);
    await settled(t, hook.id, 1);
    const request = target.requests.find((r) => r.url === '/hooks/plain');
    assert.ok(request);
    assert.equal(JSON.parse(request.body).id, call.id);
    assert.equal(JSON.parse(request.body).agent_id, null);
    assert.equal(request.headers['x-signature'], undefined);
    assert.equal(request.headers['webhook-signature'], undefined);
    assert.equal(request.headers['webhook-id'], undefined);
    assert.equal(request.headers['webhook-timestamp'], undefined);
    assert.equal(request.headers['x-event'], 'call.completed');
    const [delivery] = await deliveriesOf(t, hook.id);
    assert.equal(delivery!.status, 'succeeded');
  });

  test('every subscription of the organization gets the call once; /metrics counts the attempts', async () => {
    const org = await connectPlatform(t);
    const second = await startHttpsTarget();
    try {
      const a = await subscribeHook(t, org, { hookUrl: `${target.url}/hooks/a` });
      const b = await subscribeHook(t, org, { hookUrl: `${second.url}/hooks/b` });
      const call = await completeCall(t, org.member);
      await settled(t, a.id, 1);
      await settled(t, b.id, 1);
      assert.equal(target.requests.filter((r) => r.url === '/hooks/a' && JSON.parse(r.body).id === call.id).length, 1);
      assert.equal(second.requests.filter((r) => JSON.parse(r.body).id === call.id).length, 1);
      const metrics = await t.app.inject({ url: '/metrics' });
      assert.equal(metrics.statusCode, 200);
      assert.match(String(metrics.headers['content-type']), /^text\/plain/);
      assert.match(metrics.body, /switchboard_webhook_delivery_attempts_total\{outcome="succeeded"\} \d+/);
      assert.match(metrics.body, /switchboard_webhook_delivery_attempt_duration_seconds_bucket\{le="0.005",outcome="succeeded"\} \d+/);
    } finally {
      await second.close();
    }
  });
});
