// POST /webhooks/{id}/recover end to end: failed deliveries of a real worker
// to a real HTTPS receiver are sent again after one call, once each, and the
// call is bounded and refuses what it cannot do.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { createClient, issueTokens, platformHeaders } from '../helpers/oauth.ts';
import {
  barrierDelivery,
  completeCall,
  connectPlatform,
  deliveriesOf,
  settled,
  startDeliveryRig,
  startWebhookApp,
  subscribeHook,
  type DeliveryRig,
} from '../helpers/webhooks.ts';
import { RECOVER_BATCH } from '../../src/webhooks/recovery.service.ts';

const HOUR = 3_600_000;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

describe('recover failed deliveries', () => {
  let rig: DeliveryRig;
  let t: TestApp;
  before(async () => {
    rig = await startDeliveryRig();
    t = rig.t;
  });
  after(() => rig.close());

  test('every failed delivery since the time is sent again, once, with its X-Delivery-Id; a second call sends nothing twice', async () => {
    const path = `/hooks/${Math.random().toString(36).slice(2)}`;
    let healthy = false;
    rig.target.respond((request) =>
      request.url === path && !healthy ? { status: 503 } : { status: 200, delayMs: request.url === path ? 400 : 0 },
    );
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `${rig.target.url}${path}` });
    for (let i = 0; i < 3; i++) await completeCall(t, org.member, { summary: `Call ${i}` });
    const failed = await settled(t, hook.id, 3);
    assert.ok(failed.every((d) => d.status === 'failed'));
    const before = rig.target.requests.filter((r) => r.url === path).length;
    assert.equal(before, 9, 'three attempts each');

    healthy = true;
    const first = await t.app.inject({
      method: 'POST',
      url: `/webhooks/${hook.id}/recover`,
      headers: { 'x-user-token': org.member.token },
      payload: { since: ago(HOUR) },
    });
    assert.equal(first.statusCode, 202, first.body);
    assert.deepEqual(
      { ...(first.json() as object), since: undefined },
      { subscription_id: hook.id, since: undefined, requeued: 3, more: false },
    );
    // While they are queued or in flight (the receiver takes 400 ms), recovering again queues nothing.
    const second = await t.app.inject({
      method: 'POST',
      url: `/webhooks/${hook.id}/recover`,
      headers: org.headers,
      payload: { since: ago(HOUR) },
    });
    assert.equal(second.statusCode, 202, second.body);
    assert.equal(second.json().requeued, 0);

    const done = await settled(t, hook.id, 3);
    assert.ok(done.every((d) => d.status === 'succeeded'));
    // A later call's delivery settles: anything queued twice would have been sent by then.
    await barrierDelivery(t, org.member, hook.id);
    const failedIds = new Set(failed.map((d) => d.id));
    const resent = rig.target.requests
      .filter((r) => r.url === path)
      .slice(before)
      .filter((r) => failedIds.has(String(r.headers['x-delivery-id'])));
    assert.equal(resent.length, 3, 'each failed delivery arrives exactly once more');
    assert.deepEqual(new Set(resent.map((r) => r.headers['x-delivery-id'])), new Set(failed.map((d) => d.id)));
    assert.deepEqual(
      resent.map((r) => r.headers['x-delivery-attempt']),
      ['4', '4', '4'],
    );
  });

  test('only deliveries created since the time are recovered', async () => {
    const path = `/hooks/${Math.random().toString(36).slice(2)}`;
    rig.target.respond((request) => (request.url === path ? { status: 500 } : { status: 200 }));
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `${rig.target.url}${path}` });
    await completeCall(t, org.member, { summary: 'old' });
    await completeCall(t, org.member, { summary: 'new' });
    const [older] = await settled(t, hook.id, 2);
    // The first delivery was created two hours ago.
    await t.db.pool.query("UPDATE webhook_deliveries SET created_at = now() - interval '2 hours' WHERE id = $1", [older!.id]);
    const res = await t.app.inject({
      method: 'POST',
      url: `/webhooks/${hook.id}/recover`,
      headers: { 'x-user-token': org.member.token },
      payload: { since: ago(HOUR) },
    });
    assert.equal(res.json().requeued, 1);
    const rows = await deliveriesOf(t, hook.id);
    assert.equal(rows.find((r) => r.id === older!.id)!.status, 'failed', 'the older delivery is left alone');
  });
});

describe('recover is bounded and refuses what it cannot do', () => {
  let t: TestApp;
  before(async () => {
    t = await startWebhookApp();
  });
  after(() => t.close());

  async function failedHook() {
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/hook' });
    return { org, hook };
  }
  const recover = (id: string, headers: Record<string, string>, payload: unknown) =>
    t.app.inject({ method: 'POST', url: `/webhooks/${id}/recover`, headers, payload: payload as Record<string, unknown> });

  test(`at most ${RECOVER_BATCH} deliveries per call, oldest first; more: true until none remain`, async () => {
    const { org, hook } = await failedHook();
    // 1001 calls, each with a failed delivery (no worker runs in this app).
    await t.db.pool.query(
      `WITH c AS (
         INSERT INTO calls (organization_id, status, completed_at, summary, duration_seconds, created_at)
         SELECT $1, 'completed', now(), 'x', 1, now() - make_interval(secs => g) FROM generate_series(1, $3) g RETURNING id, created_at
       )
       , d AS (
         INSERT INTO webhook_deliveries (organization_id, subscription_id, call_id, event, body, status, attempts, finished_at, created_at)
         SELECT $1, $2, c.id, 'call.completed', '{}', 'failed', 3, now(), c.created_at FROM c RETURNING id
       )
       INSERT INTO webhook_attempts (organization_id, delivery_id, subscription_id, attempt, attempted_at, status_code, outcome)
       SELECT $1, d.id, $2, 3, now(), 503, 'failed' FROM d`,
      [org.member.org.id, hook.id, RECOVER_BATCH + 1],
    );
    const first = await recover(hook.id, { 'x-user-token': org.member.token }, { since: ago(HOUR) });
    assert.equal(first.statusCode, 202);
    assert.equal(first.json().requeued, RECOVER_BATCH);
    assert.equal(first.json().more, true);
    const { rows } = await t.db.pool.query<{ status: string }>(
      'SELECT status FROM webhook_deliveries WHERE subscription_id = $1 ORDER BY created_at LIMIT 1',
      [hook.id],
    );
    assert.equal(rows[0]!.status, 'pending', 'the oldest went first');
    const second = await recover(hook.id, { 'x-user-token': org.member.token }, { since: ago(HOUR) });
    assert.deepEqual([second.json().requeued, second.json().more], [1, false]);
    const third = await recover(hook.id, { 'x-user-token': org.member.token }, { since: ago(HOUR) });
    assert.deepEqual([third.json().requeued, third.json().more], [0, false]);
  });

  test('deliveries dropped when the grant ended (failed without a final failed attempt) are not recovered', async () => {
    const { org, hook } = await failedHook();
    await t.db.pool.query(
      `WITH c AS (INSERT INTO calls (organization_id) VALUES ($1) RETURNING id)
       INSERT INTO webhook_deliveries (organization_id, subscription_id, call_id, event, body, status, attempts, finished_at)
       SELECT $1, $2, c.id, 'call.completed', '{}', 'failed', 0, now() FROM c`,
      [org.member.org.id, hook.id],
    );
    const res = await recover(hook.id, { 'x-user-token': org.member.token }, { since: ago(HOUR) });
    assert.deepEqual([res.statusCode, res.json().requeued, res.json().more], [202, 0, false]);
  });

  const badSince: [string, unknown][] = [
    ['in the future', new Date(Date.now() + 10 * 60_000).toISOString()],
    ['older than 30 days', ago(31 * 24 * HOUR)],
    ['not a date-time', 'yesterday'],
    ['a number', 1700000000],
  ];
  for (const [name, since] of badSince) {
    test(`since ${name}: 400 naming since`, async () => {
      const { org, hook } = await failedHook();
      const res = await recover(hook.id, { 'x-user-token': org.member.token }, { since });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().code, 'REQUEST_VALIDATION');
      assert.deepEqual(
        res.json().errors.map((e: { field: string }) => e.field),
        ['since'],
      );
    });
  }

  test('no since, or an unknown field: 400', async () => {
    const { org, hook } = await failedHook();
    assert.equal((await recover(hook.id, { 'x-user-token': org.member.token }, {})).statusCode, 400);
    assert.equal((await recover(hook.id, { 'x-user-token': org.member.token }, { since: ago(HOUR), limit: 5 })).statusCode, 400);
  });

  test('a disabled subscription: 409 WEBHOOK_SUBSCRIPTION_DISABLED', async () => {
    const { org, hook } = await failedHook();
    await t.db.pool.query("UPDATE webhook_subscriptions SET status = 'disabled', disabled_at = now() WHERE id = $1", [hook.id]);
    const res = await recover(hook.id, { 'x-user-token': org.member.token }, { since: ago(HOUR) });
    assert.equal(res.statusCode, 409);
    assert.equal(res.json().code, 'WEBHOOK_SUBSCRIPTION_DISABLED');
  });

  test("another organization's subscription, another platform's, or none: 404; no credentials: 401", async () => {
    const { hook } = await failedHook();
    const stranger = await connectPlatform(t);
    assert.equal((await recover(hook.id, { 'x-user-token': stranger.member.token }, { since: ago(HOUR) })).statusCode, 404);
    assert.equal((await recover(hook.id, stranger.headers, { since: ago(HOUR) })).statusCode, 404);
    const { org, hook: mine } = await failedHook();
    const otherClient = await createClient(t.db.pool, { name: 'Other platform', scopes: ['calls:read'] });
    const tokens = await issueTokens(t.db.pool, {
      client: otherClient,
      userId: org.member.user.id,
      organizationId: org.member.org.id,
      scopes: ['calls:read'],
    });
    const other = await recover(mine.id, platformHeaders(tokens, otherClient), { since: ago(HOUR) });
    assert.equal(other.statusCode, 404, 'a platform sees only its own subscriptions');
    assert.equal(other.json().code, 'WEBHOOK_SUBSCRIPTION_NOT_FOUND');
    assert.equal(
      (await recover('00000000-0000-4000-8000-000000000000', { 'x-user-token': org.member.token }, { since: ago(HOUR) })).statusCode,
      404,
    );
    assert.equal((await recover(mine.id, {}, { since: ago(HOUR) })).statusCode, 401);
  });
});
