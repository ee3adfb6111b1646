import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startHttpsTarget, type HttpsTarget } from '../../helpers/https-target.ts';
import type { TestApp } from '../../helpers/app.ts';
import {
  answeredBefore,
  assertNeighbourDelivered,
  hangingBesideHealthy,
  capturingLogger,
  HANGING_TIMEOUT_MS,
  healthOf,
  sleep,
  watchPeak,
} from '../../helpers/endpoint-health.ts';
import {
  completeCall,
  connectPlatform,
  settled,
  startTestWorker,
  startWebhookApp,
  subscribeHook,
  waitFor,
} from '../../helpers/webhooks.ts';
import { SLOW_ATTEMPT_MS, degradedSlots } from '../../../src/webhooks/worker/endpoint-health.ts';

/** The default worker's slots (worker.ts), all taken by the first round of attempts to the hanging endpoints. */
const WORKER_SLOTS = 64;
/** Of those, the share attempts to degraded endpoints may hold (endpoint-health.ts degradedSlots). */
const SLOW_SHARE_OF_SLOTS = degradedSlots(WORKER_SLOTS);

describe('an organization whose endpoints hang does not hold up another organization', () => {
  let t: TestApp;
  const targets: HttpsTarget[] = [];

  before(async () => {
    // Attempts are cut after HANGING_TIMEOUT_MS: B's deliveries must get through because the hanging
    // attempts are known slow while they run, not because they time out.
    t = await startWebhookApp({ WEBHOOK_TIMEOUT_MS: String(HANGING_TIMEOUT_MS), WEBHOOK_RETRY_SCHEDULE: '1s,2s,3s' });
  });
  after(async () => {
    await Promise.all(targets.map((target) => target.close()));
    await t.close();
  });

  test("eight endpoints that accept the connection and never answer, calls queued: the other organization's deliveries do not wait for their time-outs", async (context) => {
    const { a, b, hanging, receiver, bHook, targets: started } = await hangingBesideHealthy(t, 8, { aAnsweredBefore: true });
    targets.push(...started);
    // 160 deliveries queued: the worker's first claim fills every slot with attempts to the hanging
    // endpoints, and more than another round of them stays queued, all older than B's deliveries.
    for (let i = 0; i < 20; i++) await completeCall(t, a.member);

    const { log, errors } = capturingLogger();
    // The default concurrency: eight subscriptions at ten attempts each could hold every slot.
    const worker = await startTestWorker(t, { log });
    try {
      // Every slot is taken once the first claim's leases are there (its attempts may still be connecting).
      await waitFor('every slot taken by an attempt to a hanging endpoint', async () => {
        const { rows } = await t.db.pool.query('SELECT count(*)::int AS n FROM webhook_delivery_leases');
        return rows[0].n >= WORKER_SLOTS;
      });
      // B's calls, from the moment every slot hangs and for five seconds (past the time-outs, the circuits opening and their probes).
      const sent = await assertNeighbourDelivered(context, { t, member: b.member, receiver, fullAt: Date.now() });
      assert.ok((await settled(t, bHook.id, sent.length)).every((d) => d.status === 'succeeded'));
      assert.ok(
        hanging.every((target) => target.requests.length > 0),
        'every hanging endpoint was tried',
      );
    } finally {
      await worker.stop();
    }
    assert.deepEqual(errors(), [], 'no error-level log line');
  });

  test("eight new endpoints that never answer: they share the degraded slots from their first attempt, and the other organization's deliveries do not wait for their time-outs", async (context) => {
    const { a, b, receiver, bHook, targets: started } = await hangingBesideHealthy(t, 8, { aAnsweredBefore: false });
    targets.push(...started);
    for (let i = 0; i < 20; i++) await completeCall(t, a.member);

    const { log, errors } = capturingLogger();
    const worker = await startTestWorker(t, { log });
    try {
      await waitFor('the degraded share taken by attempts to the new hanging endpoints', async () => {
        const { rows } = await t.db.pool.query('SELECT count(*)::int AS n FROM webhook_delivery_leases');
        return rows[0].n >= SLOW_SHARE_OF_SLOTS;
      });
      // A's attempts in flight (leased), sampled all the while B's calls run, past the hanging attempts'
      // time-outs and their retries: never more than the degraded share.
      const aLeases = watchPeak(async () => {
        const { rows } = await t.db.pool.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM webhook_delivery_leases WHERE organization_id = $1',
          [a.member.org.id],
        );
        return rows[0]!.n;
      });
      const sent = await assertNeighbourDelivered(context, { t, member: b.member, receiver, fullAt: Date.now() }).finally(() =>
        aLeases.stop(),
      );
      const { peak, samples } = await aLeases.stop();
      context.diagnostic(`A's leases peaked at ${peak} over ${samples} samples (degraded share ${SLOW_SHARE_OF_SLOTS})`);
      assert.equal(peak, SLOW_SHARE_OF_SLOTS, 'never answered: no more than (and all of) the degraded share while B delivered');
      assert.ok((await settled(t, bHook.id, sent.length)).every((d) => d.status === 'succeeded'));
    } finally {
      await worker.stop();
    }
    assert.deepEqual(errors(), [], 'no error-level log line');
  });
});

describe("degraded endpoints hold at most their share of a worker's slots", () => {
  let t: TestApp;
  const targets: HttpsTarget[] = [];

  before(async () => {
    t = await startWebhookApp({ WEBHOOK_TIMEOUT_MS: '1500', WEBHOOK_RETRY_SCHEDULE: '1s,2s,3s' });
  });
  after(async () => {
    await Promise.all(targets.map((target) => target.close()));
    await t.close();
  });

  test("a worker of eight slots: at most two attempts to degraded endpoints at once, while a healthy endpoint's deliveries flow", async () => {
    const SLOW_ANSWER_MS = SLOW_ATTEMPT_MS + 100;
    // One target for all degraded endpoints, so its open requests are theirs together: two answer
    // slowly (healthy but slow), one fails slowly (500), one hangs until the time-out.
    const degraded = await startHttpsTarget(async (request) => {
      if (request.url.startsWith('/slow')) return { delayMs: SLOW_ANSWER_MS, status: 200 };
      if (request.url === '/failing') return { delayMs: 900, status: 500 };
      return { hang: true };
    });
    // Answered well within SLOW_ATTEMPT_MS, yet slowly enough for B's calls to pile up beyond the degraded share.
    const healthy = await startHttpsTarget(() => ({ delayMs: 400, status: 204 }));
    targets.push(degraded, healthy);
    const a = await connectPlatform(t);
    const b = await connectPlatform(t);
    const aHooks: { id: string }[] = [];
    for (const path of ['/slow-1', '/slow-2', '/failing', '/hanging'])
      aHooks.push(await subscribeHook(t, a, { hookUrl: `${degraded.url}${path}` }));
    const bHook = await subscribeHook(t, b, { hookUrl: `${healthy.url}/b` });
    await answeredBefore(t.db.pool, [bHook.id]);

    const { log, errors } = capturingLogger();
    const worker = await startTestWorker(t, { log, concurrency: 8 });
    try {
      // One call first: each of the four endpoints shows what it is (slow, failing, hanging).
      await completeCall(t, a.member);
      await waitFor('all four endpoints known degraded', async () => {
        const rows = await Promise.all(aHooks.map((hook) => healthOf(t.db.pool, hook.id)));
        return rows.every((h) => h.slow || h.consecutive_failures > 0);
      });
      await waitFor('the first round answered', async () => degraded.open === 0);
      const phase = degraded.requests.length;

      // Five more calls for A (twenty deliveries to degraded endpoints), then thirty for B.
      for (let i = 0; i < 5; i++) await completeCall(t, a.member);
      for (let i = 0; i < 30; i++) await completeCall(t, b.member);
      const bDone = await settled(t, bHook.id, 30);
      assert.ok(bDone.every((d) => d.status === 'succeeded'));
      const { rows } = await t.db.pool.query(
        "SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = ANY($1) AND status = 'pending'",
        [aHooks.map((h) => h.id)],
      );
      assert.ok(rows[0].n > 0, "B's deliveries went through while the degraded endpoints still had a backlog");
      assert.ok(Math.max(...healthy.requests.map((r) => r.openAtArrival)) > 2, 'the healthy endpoint had more than the degraded share');
      // Keep watching the degraded endpoints for a while longer.
      await sleep(2000);
      const peak = Math.max(...degraded.requests.slice(phase).map((r) => r.openAtArrival));
      assert.equal(peak, 2, 'degraded endpoints held at most (and used) a quarter of the eight slots');
    } finally {
      await worker.stop();
    }
    assert.deepEqual(errors(), [], 'no error-level log line');
  });
});
