import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, describe, test } from 'node:test';
import { startHttpsTarget, type HttpsTarget, type TargetResponse } from '../../helpers/https-target.ts';
import type { TestApp } from '../../helpers/app.ts';
import { capturingLogger, healthOf, heldAnswer, recoveringTarget, sleep, type EndpointHealthRow } from '../../helpers/endpoint-health.ts';
import {
  completeCall,
  connectPlatform,
  settled,
  startTestWorker,
  startWebhookApp,
  subscribeHook,
  waitFor,
} from '../../helpers/webhooks.ts';
import { BREAKER_THRESHOLD, MAX_IN_FLIGHT_PER_SUBSCRIPTION } from '../../../src/webhooks/worker/endpoint-health.ts';
import type { DeliveryWorker } from '../../../src/webhooks/worker/worker.ts';

// One endpoint's health, end to end: a worker in this process, real HTTPS
// targets on 127.0.0.1, the health as the subscription row holds it.
// The circuit's waits are the retry schedule: 1 s, then 2 s, then 3 s.
const WAITS_MS = [1000, 2000, 3000];

describe('endpoint health', () => {
  let t: TestApp;
  let worker: DeliveryWorker | undefined;
  let logged: ReturnType<typeof capturingLogger>;
  const targets: { close(): Promise<void> }[] = [];

  before(async () => {
    t = await startWebhookApp({ WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_RETRY_SCHEDULE: '1s,2s,3s' });
  });
  after(async () => {
    await Promise.all(targets.map((target) => target.close()));
    await t.close();
  });
  // A test that failed half-way leaves no worker behind for the next one.
  afterEach(async () => {
    await worker?.stop();
    worker = undefined;
  });

  async function startWorker() {
    logged = capturingLogger();
    worker = await startTestWorker(t, { log: logged.log });
  }
  async function stopWorker() {
    await worker?.stop();
    worker = undefined;
    assert.deepEqual(logged.errors(), [], 'no error-level log line');
  }
  async function target(handler: Parameters<typeof startHttpsTarget>[0]): Promise<HttpsTarget> {
    const started = await startHttpsTarget(handler);
    targets.push(started);
    return started;
  }
  const health = (id: string) => healthOf(t.db.pool, id);
  const until = (what: string, id: string, test: (h: EndpointHealthRow) => boolean, timeoutMs = 10_000) =>
    waitFor(
      what,
      async () => {
        const h = await health(id);
        return test(h) ? h : undefined;
      },
      timeoutMs,
    );

  /**
   * A subscription whose first attempt failed: one attempt at a time from
   * then on, so the calls completed after it are attempted one by one.
   */
  async function failedOnce(url: string, calls: number) {
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: url });
    await completeCall(t, org.member);
    const first = await until('the first failure to be recorded', hook.id, (h) => h.consecutive_failures === 1);
    assert.equal(first.concurrency_limit, 1, 'an unhealthy attempt cuts the subscription to one attempt in flight');
    assert.equal(first.circuit_state, 'closed');
    assert.equal(first.answered, false, 'a failure is no answer: still degraded');
    for (let i = 1; i < calls; i++) await completeCall(t, org.member);
    return { hook, org };
  }

  test('five unhealthy attempts in a row open the circuit; nothing is sent during its wait, then one probe; a healthy answer closes it', async () => {
    await startWorker();
    const PROBE_HOLD_MS = 600;
    // One of each kind of unhealthy attempt, then the probe, answered once the test has seen it in flight.
    const probeAnswer = heldAnswer({ status: 200 }, PROBE_HOLD_MS);
    const plan: TargetResponse[] = [{ status: 500 }, { status: 503 }, { status: 429 }, { destroy: true }, { hang: true }];
    const receiver = await target((_request, index) =>
      index === BREAKER_THRESHOLD ? probeAnswer.answer() : (plan[index] ?? { status: 204 }),
    );
    const { hook } = await failedOnce(`${receiver.url}/breaker`, 10);

    const opened = await until('the circuit to open', hook.id, (h) => h.circuit_state === 'open');
    assert.equal(receiver.requests.length, BREAKER_THRESHOLD, 'it opens on the fifth unhealthy attempt');
    assert.deepEqual(
      {
        failures: opened.consecutive_failures,
        opens: opened.circuit_opens,
        wait: opened.wait_ms,
        limit: opened.concurrency_limit,
        shown: opened.shown,
      },
      { failures: BREAKER_THRESHOLD, opens: 1, wait: WAITS_MS[0], limit: 1, shown: 'open' },
    );
    const { rows: kinds } = await t.db.pool.query(
      'SELECT status_code, error FROM webhook_attempts WHERE subscription_id = $1 ORDER BY attempted_at',
      [hook.id],
    );
    assert.deepEqual(kinds, [
      { status_code: 500, error: null },
      { status_code: 503, error: null },
      { status_code: 429, error: null },
      { status_code: null, error: 'connection' },
      { status_code: null, error: 'timeout' },
    ]);

    // Nine deliveries are due (and soon the first one's retry), yet nothing goes out before the wait is over.
    await receiver.waitForRequests(BREAKER_THRESHOLD + 1, 5000);
    const probe = receiver.requests[BREAKER_THRESHOLD]!;
    const retryAt = opened.circuit_retry_at!.getTime();
    assert.ok(
      probe.receivedAt.getTime() >= retryAt - 1,
      `the probe came ${retryAt - probe.receivedAt.getTime()} ms before the wait was over`,
    );
    // The worker looks again when the wait ends (the safety poll is 30 s away; a loaded machine may take seconds).
    assert.ok(probe.receivedAt.getTime() - retryAt < 5000, `the probe came ${probe.receivedAt.getTime() - retryAt} ms after the wait`);

    // Probing: the circuit is still open, its wait over, and the probe, held by the target until now, is the only attempt in flight.
    const probing = await health(hook.id);
    assert.equal(receiver.open, 1, 'one probe at a time');
    probeAnswer.release();
    assert.equal(probing.circuit_state, 'open');
    assert.equal(probing.shown, 'probing');
    assert.equal(receiver.requests.length, BREAKER_THRESHOLD + 1);

    const closed = await until('the circuit to close', hook.id, (h) => h.circuit_state === 'closed');
    assert.deepEqual(
      { failures: closed.consecutive_failures, opens: closed.circuit_opens, retryAt: closed.circuit_retry_at, shown: closed.shown },
      { failures: 0, opens: 0, retryAt: null, shown: 'closed' },
    );
    assert.ok(closed.circuit_changed_at! > opened.circuit_changed_at!);
    const deliveries = await settled(t, hook.id, 10);
    assert.ok(deliveries.every((d) => d.status === 'succeeded'));
    // Until the probe was answered, every attempt was the only one in flight.
    const serial = receiver.requests.slice(0, BREAKER_THRESHOLD + 2);
    assert.deepEqual(
      serial.map((r) => r.openAtArrival),
      serial.map(() => 1),
    );
    assert.ok(receiver.requests[BREAKER_THRESHOLD + 1]!.receivedAt >= probe.closedAt!, "the next attempt waited for the probe's answer");
    assert.equal((await health(hook.id)).concurrency_limit, null, 'ten healthy answers lift the limit');
    await stopWorker();
  });

  test('a failed probe opens the circuit again for the next, longer wait', async () => {
    await startWorker();
    // Five failures open it; the first two probes fail, the third is answered.
    const failures = BREAKER_THRESHOLD + 2;
    const receiver = await target((_request, index) => (index < failures ? { status: 500 } : { status: 204 }));
    const { hook } = await failedOnce(`${receiver.url}/reopen`, 10);

    let previous = await until('the circuit to open', hook.id, (h) => h.circuit_state === 'open');
    assert.equal(receiver.requests.length, BREAKER_THRESHOLD);
    assert.deepEqual([previous.circuit_opens, previous.wait_ms], [1, WAITS_MS[0]]);
    for (let opening = 2; opening <= 3; opening++) {
      const reopened = await until(`opening ${opening}`, hook.id, (h) => h.circuit_opens === opening, 10_000);
      // The failed probe was the one attempt made since the last opening, and it waited for the wait's end.
      assert.equal(receiver.requests.length, BREAKER_THRESHOLD + opening - 1);
      const probe = receiver.requests.at(-1)!;
      assert.ok(
        probe.receivedAt.getTime() >= previous.circuit_retry_at!.getTime() - 1,
        `probe ${opening - 1} came before the wait was over`,
      );
      assert.deepEqual(
        {
          state: reopened.circuit_state,
          failures: reopened.consecutive_failures,
          wait: reopened.wait_ms,
          limit: reopened.concurrency_limit,
        },
        { state: 'open', failures: BREAKER_THRESHOLD + opening - 1, wait: WAITS_MS[opening - 1], limit: 1 },
      );
      assert.ok(reopened.circuit_changed_at! > previous.circuit_changed_at!);
      previous = reopened;
    }
    await receiver.waitForRequests(failures + 1, WAITS_MS[2]! + 2000);
    assert.ok(receiver.requests[failures]!.receivedAt.getTime() >= previous.circuit_retry_at!.getTime() - 1, 'the third probe waited 3 s');
    const closed = await until('the circuit to close', hook.id, (h) => h.circuit_state === 'closed');
    assert.deepEqual([closed.consecutive_failures, closed.circuit_opens, closed.circuit_retry_at], [0, 0, null]);
    assert.ok((await settled(t, hook.id, 10, 10_000)).every((d) => d.status === 'succeeded'));
    await stopWorker();
  });

  test('after an unhealthy attempt one attempt at a time, then one more per healthy answer, back to ten and no limit of its own', async () => {
    const { target: receiver, overLimit, recover } = await recoveringTarget(150);
    targets.push(receiver);
    await startWorker();
    const { hook, org } = await failedOnce(`${receiver.url}/grows`, 1);
    // A backlog queued while no worker runs: from then on only the limit holds the attempts back.
    await stopWorker();
    recover();
    const calls = 60;
    for (let i = 0; i < calls; i++) await completeCall(t, org.member);
    const phase = receiver.requests.length;

    // The row's limit, as it changes.
    const limits: (number | null)[] = [];
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const { concurrency_limit: limit } = await health(hook.id);
        if (limits.length === 0 || limits.at(-1) !== limit) limits.push(limit);
        await sleep(5);
      }
    })();

    await startWorker();
    const deliveries = await settled(t, hook.id, calls + 1, 20_000);
    watching = false;
    await watcher;

    assert.ok(deliveries.every((d) => d.status === 'succeeded'));
    assert.equal((await health(hook.id)).answered, true, 'answered in time: no longer degraded for want of an answer');
    assert.deepEqual(overLimit, [], 'never more in flight than one plus the healthy answers so far');
    const healthy = receiver.requests.slice(phase);
    assert.equal(healthy[0]!.openAtArrival, 1);
    assert.equal(
      Math.max(...healthy.map((r) => r.openAtArrival)),
      MAX_IN_FLIGHT_PER_SUBSCRIPTION,
      'it grows back to the cap, never past it',
    );
    // 1, rising step by step, then lifted (NULL) once back at the cap.
    assert.equal(limits[0], 1);
    assert.equal(limits.at(-1), null);
    const rising = limits.slice(0, -1) as number[];
    assert.ok(
      rising.every((limit, i) => limit !== null && (i === 0 || limit > rising[i - 1]!)),
      `limits seen: ${limits.join(', ')}`,
    );
    assert.ok(rising.length >= 3, `the limit rose gradually (seen: ${limits.join(', ')})`);
    const final = await health(hook.id);
    assert.deepEqual([final.consecutive_failures, final.circuit_state, final.slow], [0, 'closed', false]);
    await stopWorker();
  });

  test('refused connections and TLS failures are unhealthy, a 404 healthy', async () => {
    const gone = await startHttpsTarget();
    const refusedPort = gone.port;
    await gone.close();
    // Plain HTTP where HTTPS is expected: the TLS handshake fails.
    const plain = http.createServer((_req, res) => res.end());
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    targets.push({ close: () => new Promise<void>((resolve) => plain.close(() => resolve())) });
    const notFound = await target(() => ({ status: 404 }));

    const org = await connectPlatform(t);
    const hooks = {
      refused: await subscribeHook(t, org, { hookUrl: `https://127.0.0.1:${refusedPort}/refused` }),
      tls: await subscribeHook(t, org, { hookUrl: `https://127.0.0.1:${(plain.address() as AddressInfo).port}/tls` }),
      notFound: await subscribeHook(t, org, { hookUrl: `${notFound.url}/missing` }),
    };
    for (let i = 0; i < BREAKER_THRESHOLD; i++) await completeCall(t, org.member);
    await startWorker();

    for (const [name, error] of [
      ['refused', 'connection'],
      ['tls', 'tls'],
    ] as const) {
      const h = await until(`${name}: the circuit to open`, hooks[name].id, (row) => row.circuit_state === 'open');
      assert.deepEqual([h.consecutive_failures, h.circuit_opens, h.concurrency_limit], [BREAKER_THRESHOLD, 1, 1], name);
      const { rows } = await t.db.pool.query('SELECT DISTINCT error FROM webhook_attempts WHERE subscription_id = $1', [hooks[name].id]);
      assert.deepEqual(rows, [{ error }], name);
    }
    await waitFor('five 404s recorded', async () => {
      const { rows } = await t.db.pool.query('SELECT count(*)::int AS n FROM webhook_attempts WHERE subscription_id = $1', [
        hooks.notFound.id,
      ]);
      return rows[0].n >= BREAKER_THRESHOLD;
    });
    const answered = await health(hooks.notFound.id);
    assert.deepEqual(
      { failures: answered.consecutive_failures, limit: answered.concurrency_limit, state: answered.circuit_state, slow: answered.slow },
      { failures: 0, limit: null, state: 'closed', slow: false },
      'a 404 says the endpoint works',
    );
    await stopWorker();
    await t.db.pool.query('DELETE FROM webhook_subscriptions WHERE id = ANY($1)', [Object.values(hooks).map((h) => h.id)]);
  });

  test('failures of attempts sent before the circuit opened, recorded during its wait, do not extend it', async () => {
    // Ten attempts at once: five answered 500 at once open the circuit, five answered 500 a second later.
    const burst = await target((_request, index) =>
      index < BREAKER_THRESHOLD ? { delayMs: 100, status: 500 } : index < 10 ? { delayMs: 1000, status: 500 } : { status: 204 },
    );
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `${burst.url}/burst` });
    for (let i = 0; i < 10; i++) await completeCall(t, org.member);
    // The circuit's first wait is 5 s here: the late failures are surely recorded within it.
    logged = capturingLogger();
    worker = await startTestWorker(t, { log: logged.log, config: { ...t.config, webhookRetryScheduleMs: [5000, 6000, 7000] } });

    const opened = await until('the circuit to open', hook.id, (h) => h.circuit_state === 'open');
    assert.deepEqual([opened.circuit_opens, opened.wait_ms], [1, 5000]);
    await waitFor('all ten attempts recorded', async () => {
      const { rows } = await t.db.pool.query('SELECT count(*)::int AS n FROM webhook_attempts WHERE subscription_id = $1', [hook.id]);
      return rows[0].n >= 10;
    });
    assert.equal(burst.requests.length, 10);
    const later = await health(hook.id);
    assert.deepEqual(
      {
        failures: later.consecutive_failures,
        opens: later.circuit_opens,
        changed: later.circuit_changed_at,
        retryAt: later.circuit_retry_at,
      },
      { failures: 10, opens: 1, changed: opened.circuit_changed_at, retryAt: opened.circuit_retry_at },
      'the five late failures counted, but the circuit opened once, for the first wait',
    );
    await stopWorker();
    await t.db.pool.query('DELETE FROM webhook_subscriptions WHERE id = $1', [hook.id]);
  });

  // Rule 5 of migration 0022 holds even when an attempt runs longer than the circuit's wait
  // (WEBHOOK_TIMEOUT_MS above the first WEBHOOK_RETRY_SCHEDULE step): the time-outs of attempts sent
  // before the opening end after the wait, and are told from a probe by when they were sent.
  test('attempts sent before the circuit opened that time out after its wait do not open it again', async () => {
    // Ten attempts at once: five answered 500 open the circuit for 1 s; five hang until their 2.5 s time-out.
    const receiver = await target((_request, index) =>
      index < BREAKER_THRESHOLD ? { delayMs: 100, status: 500 } : index < 10 ? { hang: true } : { status: 204 },
    );
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `${receiver.url}/late` });
    for (let i = 0; i < 10; i++) await completeCall(t, org.member);
    logged = capturingLogger();
    worker = await startTestWorker(t, { log: logged.log, config: { ...t.config, webhookTimeoutMs: 2500 } });
    try {
      const opened = await until('the circuit to open', hook.id, (h) => h.circuit_state === 'open');
      assert.deepEqual([opened.circuit_opens, opened.wait_ms], [1, WAITS_MS[0]]);
      await waitFor('all ten attempts recorded', async () => {
        const { rows } = await t.db.pool.query('SELECT count(*)::int AS n FROM webhook_attempts WHERE subscription_id = $1', [hook.id]);
        return rows[0].n >= 10;
      });
      const {
        rows: [last],
      } = await t.db.pool.query<{ at: Date }>('SELECT max(attempted_at) AS at FROM webhook_attempts WHERE subscription_id = $1', [hook.id]);
      assert.ok(last!.at < opened.circuit_changed_at!, 'every attempt was sent before the circuit opened');
      const ended = await health(hook.id);
      assert.deepEqual(
        { opens: ended.circuit_opens, retryAt: ended.circuit_retry_at },
        { opens: 1, retryAt: opened.circuit_retry_at },
        'no probe failed: the circuit keeps its first wait (over now), and the probe goes out',
      );
    } finally {
      await stopWorker();
      await t.db.pool.query('DELETE FROM webhook_subscriptions WHERE id = $1', [hook.id]);
    }
  });
});
