import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { createPool, type Pool } from '../../src/db/pool.ts';
import { HANDED_BACK_MESSAGE } from '../../src/webhooks/worker/hand-back.queries.ts';
import type { DeliveryWorker } from '../../src/webhooks/worker/worker.ts';
import type { TestApp } from '../helpers/app.ts';
import { adminQuery } from '../helpers/db.ts';
import { startHttpsTarget, type HttpsTarget } from '../helpers/https-target.ts';
import { startSilentProxy, type SilentProxy } from '../helpers/silent-proxy.ts';
import {
  completeCall,
  connectPlatform,
  deliveriesOf,
  settled,
  startTestWorker,
  startWebhookApp,
  subscribeHook,
  waitFor,
} from '../helpers/webhooks.ts';

// The worker's pool reaches PostgreSQL through a proxy whose connections can
// die silently (its LISTEN connection does not: a notification always wakes
// it). No timer of the worker's could explain a delivery: the safety poll is
// far longer than the test.
describe('the route to the database dies silently under the worker', () => {
  let t: TestApp;
  let target: HttpsTarget;
  let proxy: SilentProxy;
  let pool: Pool;
  let worker: DeliveryWorker;

  before(async () => {
    t = await startWebhookApp();
    target = await startHttpsTarget();
    proxy = await startSilentProxy(t.db.url);
    // Two connections: each one gone silent costs a deadline and a growing
    // pause (1 s, 2 s, …) before the worker's next round, so a few bound the wait.
    pool = createPool(proxy.urlFor(t.db.url), 2);
    worker = await startTestWorker(t, { pool, statementDeadlineMs: 500, pollIntervalMs: 600_000 });
  });
  after(async () => {
    await worker.stop();
    await pool.end();
    await proxy.close();
    await target.close();
    await t.close();
  });

  const idleInTransaction = async () =>
    (
      await adminQuery("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND state LIKE 'idle in transaction%'", [
        t.db.name,
      ])
    ).rows[0].n as number;

  test('statements on connections gone silent fail at the deadline; the worker carries on through new ones', async () => {
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `${target.url}/silent-pool` });
    await completeCall(t, org.member);
    await settled(t, hook.id, 1, 5000); // the pool's connections now exist, through the proxy
    proxy.silence();

    await completeCall(t, org.member);
    await completeCall(t, org.member);
    const deliveries = await settled(t, hook.id, 3, 15_000);
    assert.ok(deliveries.every((d) => d.status === 'succeeded'));
    const received = new Set(target.requests.filter((r) => r.url === '/silent-pool').map((r) => r.headers['x-delivery-id']));
    assert.deepEqual(received, new Set(deliveries.map((d) => d.id)));
  });

  test('a claim whose COMMIT never arrives is ended by the server at the deadline: its locks go, its deliveries stay due', async () => {
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `${target.url}/lost-commit` });
    // The route dies just as the claim's COMMIT leaves: the server holds the
    // claim's transaction open (subscription and delivery rows locked) and
    // never hears of the client again.
    proxy.silenceWhenClientSends('COMMIT');
    await completeCall(t, org.member);
    const [delivery] = await settled(t, hook.id, 1, 15_000);
    assert.equal(delivery!.status, 'succeeded');
    // Sent perhaps twice (the first attempt left before the COMMIT), always with the same id.
    const sent = target.requests.filter((r) => r.url === '/lost-commit');
    assert.ok(sent.length >= 1 && sent.every((r) => r.headers['x-delivery-id'] === delivery!.id));
    assert.equal(await idleInTransaction(), 0, 'no transaction left open on the server');
  });

  test('a 410 recorded as the route dies fails at the deadline; the next attempt removes the subscription', async () => {
    const org = await connectPlatform(t);
    const path = '/gone-while-silent';
    target.respond((request) => (request.url === path ? { status: 410 } : { status: 200 }));
    const hook = await subscribeHook(t, org, { hookUrl: `${target.url}${path}` });
    // The outcome's statement carries 'subscription_removed' among its values:
    // the route dies as it leaves, so it never reaches the server.
    proxy.silenceWhenClientSends('subscription_removed');
    await completeCall(t, org.member);
    // Unrecorded, the lease (3.5 s) runs out, the delivery is sent again, and
    // that 410 is recorded through a new connection.
    await waitFor(
      'the subscription to be deleted',
      async () => {
        const { rowCount } = await t.db.pool.query('SELECT 1 FROM webhook_subscriptions WHERE id = $1', [hook.id]);
        return rowCount === 0;
      },
      15_000,
    );
    const sent = target.requests.filter((r) => r.url === path);
    assert.equal(sent.length, 2, 'sent again after the unrecorded 410, and not after the recorded one');
    assert.equal(new Set(sent.map((r) => r.headers['x-delivery-id'])).size, 1);
    assert.deepEqual(await deliveriesOf(t, hook.id), [], 'its deliveries went with it');
    assert.equal(await idleInTransaction(), 0, 'no transaction left open on the server');
  });
});

describe('a stopping worker hands back its attempts as the route to the database dies silently', () => {
  let t: TestApp;
  let target: HttpsTarget;
  let proxy: SilentProxy;
  let pool: Pool;

  before(async () => {
    t = await startWebhookApp();
    target = await startHttpsTarget();
    proxy = await startSilentProxy(t.db.url);
    pool = createPool(proxy.urlFor(t.db.url), 2);
  });
  after(async () => {
    await pool.end();
    await proxy.close();
    await target.close();
    await t.close();
  });

  test('the hand-back fails at the deadline, and stop() ends: the leases are left to run out', async () => {
    const path = '/hangs-at-stop';
    target.respond((request) => (request.url === path ? { hang: true } : { status: 200 }));
    const logged: { msg: string }[] = [];
    const log = pino(
      { level: 'error' },
      new Writable({
        write(chunk, _encoding, callback) {
          logged.push(JSON.parse(String(chunk)));
          callback();
        },
      }),
    );
    const drainMs = 100;
    const statementDeadlineMs = 500;
    const worker = await startTestWorker(t, { pool, log, statementDeadlineMs, drainMs, pollIntervalMs: 600_000 });
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `${target.url}${path}` });
    await completeCall(t, org.member);
    await target.waitForRequests(1, 10_000);
    let handBackSent = false;
    void proxy.silenceWhenClientSends(HANDED_BACK_MESSAGE).then(() => (handBackSent = true));

    const startedAt = performance.now();
    const stopped = await Promise.race([
      worker.stop().then(() => true),
      new Promise<false>((resolve) => setTimeout(() => resolve(false), 10_000).unref()),
    ]);
    const tookMs = performance.now() - startedAt;
    assert.ok(stopped, 'stop() ended instead of waiting on the unanswered hand-back');
    // The hand-back was sent (and swallowed) and failed at its deadline; stop() returned after both waits.
    assert.ok(handBackSent, 'the hand-back was sent');
    assert.deepEqual(
      logged.map((line) => line.msg),
      ['webhook worker stopping: could not hand back running attempts; their leases will expire'],
    );
    assert.ok(
      tookMs >= drainMs + statementDeadlineMs - 5,
      `stop() waited for the drain time and the hand-back's deadline (${tookMs.toFixed(0)} ms)`,
    );
    // Nothing reached the server: the delivery is still leased, and that lease will run out.
    const [delivery] = await deliveriesOf(t, hook.id);
    assert.equal(delivery!.status, 'pending');
    assert.notEqual(delivery!.lease_token, null);
  });
});
