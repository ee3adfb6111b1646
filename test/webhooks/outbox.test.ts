import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { completeCall, connectPlatform, startWebhookApp, subscribeHook } from '../helpers/webhooks.ts';
import { callCompletedEvent, storedCall } from '../helpers/calls.ts';

// The outbox statement builds the delivery body in SQL (one round trip for the
// call and its deliveries); it must be the exact bytes the JavaScript event gives.
describe('the call.completed outbox', () => {
  let t: TestApp;

  before(async () => {
    t = await startWebhookApp();
  });
  after(() => t.close());

  const tricky = [
    'plain',
    'quotes " and \\ backslashes \\" and / slashes',
    'control \u0000\u0001\u0008\t\n\u000b\u000c\r\u001f\u007f end'.replace('\u0000', ''),
    'unicode é ü 中文 🎉 \u2028 \u2029 \ufeff',
    "<script>alert(1)</script> & 'single'",
  ];

  async function bodiesOf(subscriptionId: string, callId: string) {
    const {
      rows: [delivery],
    } = await t.db.pool.query<{ body: string }>('SELECT body FROM webhook_deliveries WHERE subscription_id = $1 AND call_id = $2', [
      subscriptionId,
      callId,
    ]);
    const call = await storedCall(t.db.pool, callId);
    return { stored: delivery!.body, expected: JSON.stringify(callCompletedEvent(call!)) };
  }

  test('POST /calls (completed) stores each delivery body exactly as JSON.stringify of the event', async () => {
    const org = await connectPlatform(t);
    const hooks = [
      await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/outbox-a' }),
      await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/outbox-b' }),
    ];
    for (const summary of tricky) {
      const call = await completeCall(t, org.member, { summary, duration_seconds: 2_147_483_647 });
      for (const hook of hooks) {
        const { stored, expected } = await bodiesOf(hook.id, call.id);
        assert.equal(stored, expected);
        assert.equal(JSON.parse(stored).summary, summary);
      }
    }
  });

  test('POST /calls/{id}/complete writes the same body, and a second completion writes nothing', async () => {
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/outbox-c' });
    const headers = { 'x-user-token': org.member.token };
    const created = await t.app.inject({ method: 'POST', url: '/calls', headers, payload: {} });
    assert.equal(created.statusCode, 201);
    const id = created.json().id as string;
    const done = await t.app.inject({
      method: 'POST',
      url: `/calls/${id}/complete`,
      headers,
      payload: { summary: tricky[3], duration_seconds: 0 },
    });
    assert.equal(done.statusCode, 200);
    const { stored, expected } = await bodiesOf(hook.id, id);
    assert.equal(stored, expected);
    assert.equal(JSON.parse(stored).created_at, created.json().created_at);
    const again = await t.app.inject({
      method: 'POST',
      url: `/calls/${id}/complete`,
      headers,
      payload: { summary: 'again', duration_seconds: 1 },
    });
    assert.equal(again.statusCode, 409);
    const { rows } = await t.db.pool.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE call_id = $1', [id]);
    assert.equal(rows[0].n, 1);
  });
});
