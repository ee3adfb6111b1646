import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startHttpsTarget, type HttpsTarget } from '../../helpers/https-target.ts';
import type { TestApp } from '../../helpers/app.ts';
import {
  attemptsOf,
  completeCall,
  connectPlatform,
  deliveriesOf,
  settled,
  startDeliveryRig,
  type DeliveryRig,
  subscribeHook,
  waitFor,
  type Connection,
} from '../../helpers/webhooks.ts';

describe("what a delivery attempt's result leads to", () => {
  let t: TestApp;
  let target: HttpsTarget;
  let rig: DeliveryRig;

  before(async () => {
    // Time-outs at 3 s: the 'delivered at once' check needs the fast delivery to settle while the slow attempt is still open.
    rig = await startDeliveryRig({ env: { WEBHOOK_TIMEOUT_MS: '3000' } });
    ({ t, target } = rig);
  });
  after(() => rig.close());

  /** A fresh organization with one subscription at `path`; `barrier` proves the worker has moved on. */
  async function hooked(path: string): Promise<{ org: Connection; hookId: string }> {
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `${target.url}${path}` });
    return { org, hookId: hook.id };
  }

  const requestsTo = (path: string) => target.requests.filter((request) => request.url === path);

  test('a target failing twice then succeeding gets three attempts with one X-Delivery-Id, and nothing after', async () => {
    const path = '/flaky';
    let seen = 0;
    target.respond((request) => (request.url === path && ++seen <= 2 ? { status: 500, body: 'not yet' } : { status: 200, body: 'ok' }));
    const { org, hookId } = await hooked(path);
    const call = await completeCall(t, org.member);
    const [delivery] = await settled(t, hookId, 1);
    assert.equal(delivery!.status, 'succeeded');
    assert.equal(delivery!.attempts, 3);

    const received = requestsTo(path);
    assert.equal(received.length, 3);
    assert.deepEqual(
      received.map((r) => r.headers['x-delivery-attempt']),
      ['1', '2', '3'],
    );
    assert.deepEqual(new Set(received.map((r) => r.headers['x-delivery-id'])), new Set([delivery!.id]));
    assert.ok(received.every((r) => r.body === received[0]!.body && JSON.parse(r.body).id === call.id));
    assert.deepEqual(await attemptsOf(t, delivery!.id), [
      { attempt: 1, status_code: 500, error: null, outcome: 'retrying' },
      { attempt: 2, status_code: 500, error: null, outcome: 'retrying' },
      { attempt: 3, status_code: 200, error: null, outcome: 'succeeded' },
    ]);

    // Barrier: a later call of the same organization is delivered; the first is not sent again.
    await completeCall(t, org.member);
    await settled(t, hookId, 2);
    assert.equal(requestsTo(path).filter((r) => r.headers['x-delivery-id'] === delivery!.id).length, 3);
  });

  test('a target that always fails is tried 1 + schedule-length times, then the delivery is failed', async () => {
    const path = '/down';
    target.respond((request) => (request.url === path ? { status: 503, body: 'maintenance' } : { status: 200 }));
    const { org, hookId } = await hooked(path);
    await completeCall(t, org.member);
    const [delivery] = await settled(t, hookId, 1);
    assert.equal(delivery!.status, 'failed');
    const attempts = await attemptsOf(t, delivery!.id);
    assert.deepEqual(
      attempts.map((a) => a.outcome),
      ['retrying', 'retrying', 'failed'],
    );
    assert.equal(requestsTo(path).length, 3);
    const { rows } = await t.db.pool.query('SELECT status, failing_since FROM webhook_subscriptions WHERE id = $1', [hookId]);
    assert.equal(rows[0].status, 'active', 'a few hours of failures do not disable a hook');
    assert.ok(rows[0].failing_since instanceof Date);
  });

  test('410 Gone deletes the subscription and nothing more is sent', async () => {
    const path = '/gone';
    target.respond((request) => (request.url === path ? { status: 410 } : { status: 200 }));
    const { org, hookId } = await hooked(path);
    await completeCall(t, org.member);
    await waitFor('the subscription to be deleted', async () => {
      const { rowCount } = await t.db.pool.query('SELECT 1 FROM webhook_subscriptions WHERE id = $1', [hookId]);
      return rowCount === 0;
    });
    assert.equal(requestsTo(path).length, 1);
    const list = await t.app.inject({ url: '/webhooks', headers: { 'x-user-token': org.member.token } });
    assert.deepEqual(list.json(), []);
    await completeCall(t, org.member);
    assert.deepEqual(await deliveriesOf(t, hookId), []);
    assert.equal(requestsTo(path).length, 1);
  });

  test('a 302 is a failure and its Location is never requested', async () => {
    const elsewhere = await startHttpsTarget();
    try {
      const path = '/moved';
      target.respond((request) =>
        request.url === path ? { status: 302, headers: { location: `${elsewhere.url}/stolen` } } : { status: 200 },
      );
      const { org, hookId } = await hooked(path);
      await completeCall(t, org.member);
      const [delivery] = await settled(t, hookId, 1);
      assert.equal(delivery!.status, 'failed');
      assert.deepEqual(
        (await attemptsOf(t, delivery!.id)).map((a) => a.status_code),
        [302, 302, 302],
      );
      assert.equal(elsewhere.requests.length, 0);
    } finally {
      await elsewhere.close();
    }
  });

  test('a target that never answers times out while another subscription of the same call is delivered at once', async () => {
    const slow = '/never-answers';
    const fast = '/answers';
    target.respond((request) => (request.url === slow ? { hang: true } : { status: 200 }));
    const org = await connectPlatform(t);
    const slowHook = await subscribeHook(t, org, { hookUrl: `${target.url}${slow}` });
    const fastHook = await subscribeHook(t, org, { hookUrl: `${target.url}${fast}` });
    const call = await completeCall(t, org.member);

    const [fastDelivery] = await settled(t, fastHook.id, 1);
    assert.equal(fastDelivery!.status, 'succeeded');
    // Delivered while the slow attempt is still open at the target: the fast hook did not wait for it.
    const [slowRequest] = await waitFor('the slow attempt at the target', async () =>
      requestsTo(slow).length > 0 ? requestsTo(slow) : undefined,
    );
    assert.equal(slowRequest!.closedAt, undefined, 'the slow attempt is still open');
    const [slowDelivery] = await deliveriesOf(t, slowHook.id);
    assert.deepEqual(await attemptsOf(t, slowDelivery!.id), [], 'the slow attempt is not recorded yet');

    const firstAttempt = await waitFor('the slow attempt to time out', async () => (await attemptsOf(t, slowDelivery!.id))[0]);
    assert.deepEqual(firstAttempt, { attempt: 1, status_code: null, error: 'timeout', outcome: 'retrying' });
    assert.equal(JSON.parse(requestsTo(fast)[0]!.body).id, call.id);
  });

  test('429 with Retry-After waits at least that long before the next attempt', async () => {
    const path = '/throttled';
    let seen = 0;
    target.respond((request) =>
      request.url === path && ++seen === 1 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 },
    );
    const { org, hookId } = await hooked(path);
    await completeCall(t, org.member);
    const [delivery] = await settled(t, hookId, 1);
    assert.equal(delivery!.status, 'succeeded');
    const received = requestsTo(path);
    assert.equal(received.length, 2);
    const gapMs = received[1]!.receivedAt.getTime() - received[0]!.receivedAt.getTime();
    assert.ok(gapMs >= 950, `Retry-After 1 s honoured (the schedule alone says ~300 ms); gap was ${gapMs} ms`);
  });
});
