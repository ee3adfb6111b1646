import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { startHttpsTarget, type HttpsTarget } from '../helpers/https-target.ts';
import {
  attemptsOf,
  completeCall,
  connectPlatform,
  deliveriesOf,
  settled,
  startTestWorker,
  subscribeHook,
  waitFor,
  WEBHOOK_TEST_ENV,
} from '../helpers/webhooks.ts';
import type { DeliveryWorker } from '../../src/webhooks/worker/worker.ts';
import { answeredBefore } from '../helpers/endpoint-health.ts';

const CALLS = 4;

// Receivers that go away for a while and come back: every delivery arrives
// after the recovery, on the retry schedule (or later when the receiver asks
// so with Retry-After), and a receiver that hangs ties up only its own
// subscription's share of the worker.
describe('receiver outages', () => {
  let t: TestApp;
  let target: HttpsTarget;
  let worker: DeliveryWorker;

  before(async () => {
    // Retries ~300 ms apart, enough of them to outlast the outages below.
    t = await startTestApp({ env: { ...WEBHOOK_TEST_ENV, WEBHOOK_RETRY_SCHEDULE: Array(12).fill('300ms').join(',') } });
    target = await startHttpsTarget();
    worker = await startTestWorker(t);
  });
  after(async () => {
    await target.close();
    await worker.stop();
    await t.close();
  });

  test('503 with Retry-After for a window: every delivery arrives after recovery, never sooner than Retry-After allows', async () => {
    const path = '/unavailable';
    let recoverAt: number | undefined;
    target.respond((request) => {
      if (request.url !== path) return { status: 200 };
      recoverAt ??= Date.now() + 1500;
      return Date.now() < recoverAt ? { status: 503, headers: { 'retry-after': '1' } } : { status: 200 };
    });
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `${target.url}${path}` });
    const calls = [];
    for (let i = 0; i < CALLS; i++) calls.push(await completeCall(t, org.member, { summary: `unavailable ${i}` }));

    const deliveries = await settled(t, hook.id, CALLS, 30_000);
    assert.ok(
      deliveries.every((delivery) => delivery.status === 'succeeded'),
      JSON.stringify(deliveries),
    );
    for (const delivery of deliveries) {
      const attempts = await attemptsOf(t, delivery.id);
      assert.ok(attempts.length >= 2, 'the first attempt met the outage');
      assert.deepEqual(attempts.at(-1), { attempt: attempts.length, status_code: 200, error: null, outcome: 'succeeded' });
      assert.ok(attempts.slice(0, -1).every((attempt) => attempt.status_code === 503 && attempt.outcome === 'retrying'));
      const received = target.requests.filter((request) => request.headers['x-delivery-id'] === delivery.id);
      for (let i = 1; i < received.length; i++) {
        const gapMs = received[i]!.receivedAt.getTime() - received[i - 1]!.receivedAt.getTime();
        assert.ok(gapMs >= 950, `Retry-After: 1 honoured (the schedule alone says 300 ms); gap ${gapMs} ms`);
      }
    }
    const deliveredCalls = new Set(
      target.requests.filter((r) => r.url === path && r.receivedAt.getTime() >= recoverAt!).map((r) => JSON.parse(r.body).id),
    );
    assert.deepEqual(deliveredCalls, new Set(calls.map((call) => call.id)));
  });

  test('connections refused for a window: retried on the schedule, every delivery arrives once the receiver listens again', async () => {
    // A port where the receiver used to be, refusing connections until it comes back.
    const gone = await startHttpsTarget();
    const port = gone.port;
    await gone.close();
    const path = '/refused';
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `https://127.0.0.1:${port}${path}` });
    const calls = [];
    for (let i = 0; i < CALLS; i++) calls.push(await completeCall(t, org.member, { summary: `refused ${i}` }));

    await waitFor(
      'two refused attempts of every delivery',
      async () => {
        const deliveries = await deliveriesOf(t, hook.id);
        if (deliveries.length < CALLS) return false;
        for (const delivery of deliveries) if ((await attemptsOf(t, delivery.id)).length < 2) return false;
        return true;
      },
      15_000,
    );
    const back = await startHttpsTarget(() => ({ status: 200 }), { port });
    try {
      const deliveries = await settled(t, hook.id, CALLS, 30_000);
      assert.ok(deliveries.every((delivery) => delivery.status === 'succeeded'));
      for (const delivery of deliveries) {
        const attempts = await attemptsOf(t, delivery.id);
        assert.ok(
          attempts.slice(0, -1).every((attempt) => attempt.error === 'connection' && attempt.outcome === 'retrying'),
          JSON.stringify(attempts),
        );
        assert.equal(attempts.at(-1)!.outcome, 'succeeded');
      }
      // Spaced by the schedule (300 ms ± 10 %), not hammered.
      const { rows } = await t.db.pool.query<{ gap_ms: number }>(
        `SELECT extract(epoch FROM attempted_at - lag(attempted_at) OVER (PARTITION BY delivery_id ORDER BY attempt)) * 1000 AS gap_ms
           FROM webhook_attempts WHERE subscription_id = $1`,
        [hook.id],
      );
      const gaps = rows.map((row) => row.gap_ms).filter((gap) => gap !== null);
      assert.ok(gaps.length >= CALLS && gaps.every((gap) => gap >= 260), `gaps between attempts: ${gaps.join(', ')}`);
      assert.deepEqual(new Set(back.requests.map((r) => JSON.parse(r.body).id)), new Set(calls.map((call) => call.id)));
    } finally {
      await back.close();
    }
  });
});

describe('a receiver that hangs', () => {
  let t: TestApp;
  let target: HttpsTarget;
  let worker: DeliveryWorker;

  before(async () => {
    // Attempts that hang stay in flight for the whole test (10 s time-out).
    t = await startTestApp({ env: { ...WEBHOOK_TEST_ENV, WEBHOOK_TIMEOUT_MS: '10000' } });
    target = await startHttpsTarget();
    worker = await startTestWorker(t, { concurrency: 12 });
  });
  after(async () => {
    await target.close(); // ends the hanging requests, so the worker stops at once
    await worker.stop();
    await t.close();
  });

  test('holds only its own subscription’s slots (at most 10): another subscription is delivered meanwhile', async () => {
    const hang = '/hangs';
    const fast = '/fast';
    target.respond((request) => (request.url === hang ? { hang: true } : { status: 200 }));
    const org = await connectPlatform(t);
    const hangHook = await subscribeHook(t, org, { hookUrl: `${target.url}${hang}` });
    const fastHook = await subscribeHook(t, org, { hookUrl: `${target.url}${fast}` });
    // Endpoints that answered before: a new one would share the degraded slots from its first attempt.
    await answeredBefore(t.db.pool, [hangHook.id, fastHook.id]);
    const calls = 15;
    for (let i = 0; i < calls; i++) await completeCall(t, org.member, { summary: `hang ${i}` });

    // With 12 slots, a hanging subscription without its cap would take them all.
    const deliveries = await settled(t, fastHook.id, calls, 8_000);
    assert.ok(deliveries.every((delivery) => delivery.status === 'succeeded'));
    const hanging = target.requests.filter((request) => request.url === hang);
    assert.equal(hanging.length, 10, 'the hanging subscription holds exactly its 10 slots');
    const { rows } = await t.db.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM webhook_delivery_leases WHERE subscription_id = $1',
      [hangHook.id],
    );
    assert.equal(rows[0]!.n, 10);
  });
});
