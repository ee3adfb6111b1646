import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startHttpsTarget, type HttpsTarget, type TargetResponse } from '../../helpers/https-target.ts';
import type { TestApp } from '../../helpers/app.ts';
import {
  answeredBefore,
  assertNeighbourDelivered,
  errorLines,
  HANGING_TIMEOUT_MS,
  hangingBesideHealthy,
  healthOf,
  heldAnswer,
  recoveringTarget,
  sleep,
  type EndpointHealthRow,
} from '../../helpers/endpoint-health.ts';
import { completeCall, connectPlatform, settled, startWebhookApp, subscribeHook, waitFor } from '../../helpers/webhooks.ts';
import { spawnWorker, type WorkerProcess } from '../../helpers/worker-process.ts';
import {
  BREAKER_THRESHOLD,
  MAX_IN_FLIGHT_PER_SUBSCRIPTION,
  SLOW_ATTEMPT_MS,
  degradedSlots,
} from '../../../src/webhooks/worker/endpoint-health.ts';
import { DEFAULT_CONCURRENCY } from '../../../src/webhooks/worker/worker.ts';

// Endpoint health shared by two `switchboard worker` processes (default
// concurrency, 64 slots each) on one database; the app here runs no worker.
const ENV = { WEBHOOK_TIMEOUT_MS: '1500', WEBHOOK_RETRY_SCHEDULE: '1s,2s,3s' };
/**
 * For the hanging endpoints: attempts cut after HANGING_TIMEOUT_MS, well after SLOW_ATTEMPT_MS + the time a neighbour's
 * delivery may take, so B's deliveries get through because the hanging attempts are known slow while they run, not because they time out.
 */
const HANGING_ENV = { ...ENV, WEBHOOK_TIMEOUT_MS: String(HANGING_TIMEOUT_MS) };

async function twoWorkers(t: TestApp, env: Record<string, string>): Promise<WorkerProcess[]> {
  const started = await Promise.allSettled([spawnWorker(t, env), spawnWorker(t, env)]);
  const running = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await Promise.all(running.map((worker) => worker.kill('SIGKILL')));
    throw failed.reason;
  }
  return running;
}

/**
 * What each describe below shares: the app (it runs no worker), the two
 * workers a test starts and the targets it opens, all stopped after the describe.
 */
function twoWorkerRig() {
  let workers: WorkerProcess[] = [];
  const targets: HttpsTarget[] = [];
  const rig = {
    t: undefined as unknown as TestApp,
    /** Starts two `switchboard worker` processes. */
    async startWorkers(env: Record<string, string> = ENV): Promise<void> {
      workers = await twoWorkers(rig.t, env);
    },
    /** Stops both workers; resolves to their error-level log lines. */
    async stopWorkers(): Promise<string[]> {
      await Promise.all(workers.map((worker) => worker.kill('SIGTERM')));
      return workers.flatMap((worker) => errorLines(worker.output()));
    },
    /** Closes these targets after the describe. */
    closeAfter(...opened: HttpsTarget[]): void {
      targets.push(...opened);
    },
  };
  before(async () => {
    rig.t = await startWebhookApp(ENV);
  });
  after(async () => {
    await Promise.all(workers.map((worker) => worker.kill('SIGKILL')));
    await Promise.all(targets.map((target) => target.close()));
    await rig.t?.close();
  });
  return rig;
}

describe('two worker processes: an organization whose endpoints hang does not hold up another', () => {
  const rig = twoWorkerRig();

  test("sixteen endpoints that never answer, calls queued: the other organization's deliveries do not wait for their time-outs", async (context) => {
    const { t } = rig;
    // Sixteen subscriptions at ten attempts each could hold both workers' 128 slots.
    const { a, b, hanging, receiver, bHook, targets: started } = await hangingBesideHealthy(t, 16, { aAnsweredBefore: true });
    rig.closeAfter(...started);

    await rig.startWorkers(HANGING_ENV);
    // 320 deliveries: enough to fill both workers, twice over, all older than B's.
    for (let i = 0; i < 20; i++) await completeCall(t, a.member);
    // More than one worker's 64 slots hang: both workers hold attempts to the hanging endpoints.
    await waitFor('both workers holding attempts to the hanging endpoints', async () => {
      const { rows } = await t.db.pool.query('SELECT count(*)::int AS n FROM webhook_delivery_leases');
      return rows[0].n > 64;
    });
    const sent = await assertNeighbourDelivered(context, { t, member: b.member, receiver, fullAt: Date.now() });
    assert.ok((await settled(t, bHook.id, sent.length)).every((d) => d.status === 'succeeded'));
    assert.ok(
      hanging.every((target) => target.requests.length > 0),
      'every hanging endpoint was tried',
    );
    assert.deepEqual(await rig.stopWorkers(), [], 'no error-level log line');
  });
});

describe('two worker processes share one circuit breaker per subscription', () => {
  const rig = twoWorkerRig();

  test('five unhealthy attempts across both open it; one probe at a time; a failed probe reopens it for longer; a healthy one closes it', async () => {
    const { t } = rig;
    const PROBE_HOLD_MS = 600;
    // Each probe is held by the target until the test has seen it in flight: the first fails, the second is answered.
    const probes = [heldAnswer({ status: 500 }, PROBE_HOLD_MS), heldAnswer({ status: 200 }, PROBE_HOLD_MS)];
    const plan: TargetResponse[] = [{ status: 500 }, { status: 502 }, { status: 503 }, { status: 429 }, { status: 500 }];
    const receiver = await startHttpsTarget((_request, index) =>
      index >= BREAKER_THRESHOLD && index < BREAKER_THRESHOLD + 2
        ? probes[index - BREAKER_THRESHOLD]!.answer()
        : (plan[index] ?? { status: 204 }),
    );
    rig.closeAfter(receiver);
    const health = (id: string) => healthOf(t.db.pool, id);
    const until = (what: string, id: string, check: (h: EndpointHealthRow) => boolean, timeoutMs = 10_000) =>
      waitFor(
        what,
        async () => {
          const h = await health(id);
          return check(h) ? h : undefined;
        },
        timeoutMs,
      );

    await rig.startWorkers();
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `${receiver.url}/shared` });
    await completeCall(t, org.member);
    const first = await until('the first failure', hook.id, (h) => h.consecutive_failures === 1);
    assert.equal(first.concurrency_limit, 1);
    for (let i = 1; i < 10; i++) await completeCall(t, org.member);

    const opened = await until('the circuit to open', hook.id, (h) => h.circuit_state === 'open');
    assert.equal(receiver.requests.length, BREAKER_THRESHOLD, 'both workers together made five attempts, then stopped');
    assert.deepEqual([opened.consecutive_failures, opened.circuit_opens, opened.wait_ms], [BREAKER_THRESHOLD, 1, 1000]);

    // The first probe: after the wait, and the only attempt in flight in either worker.
    await receiver.waitForRequests(BREAKER_THRESHOLD + 1, 5000);
    const probe = receiver.requests[BREAKER_THRESHOLD]!;
    assert.ok(probe.receivedAt.getTime() >= opened.circuit_retry_at!.getTime() - 1, 'no attempt while the circuit is open');
    const probing = await health(hook.id);
    assert.equal(receiver.open, 1, 'one probe at a time, across both workers');
    probes[0]!.release();
    assert.equal(probing.shown, 'probing');
    assert.equal(receiver.requests.length, BREAKER_THRESHOLD + 1);

    const reopened = await until('the circuit to open again', hook.id, (h) => h.circuit_opens === 2);
    assert.deepEqual([reopened.circuit_state, reopened.consecutive_failures, reopened.wait_ms], ['open', BREAKER_THRESHOLD + 1, 2000]);
    assert.equal(receiver.requests.length, BREAKER_THRESHOLD + 1);

    await receiver.waitForRequests(BREAKER_THRESHOLD + 2, 5000);
    const second = receiver.requests[BREAKER_THRESHOLD + 1]!;
    assert.ok(second.receivedAt.getTime() >= reopened.circuit_retry_at!.getTime() - 1, 'the second probe waited the longer wait');
    assert.equal((await health(hook.id)).shown, 'probing');
    assert.equal(receiver.open, 1);
    probes[1]!.release();
    const closed = await until('the circuit to close', hook.id, (h) => h.circuit_state === 'closed');
    assert.deepEqual([closed.consecutive_failures, closed.circuit_opens, closed.circuit_retry_at], [0, 0, null]);

    assert.ok((await settled(t, hook.id, 10, 15_000)).every((d) => d.status === 'succeeded'));
    const serial = receiver.requests.slice(0, BREAKER_THRESHOLD + 3);
    assert.deepEqual(
      serial.map((r) => r.openAtArrival),
      serial.map(() => 1),
      'one attempt at a time until the circuit closed',
    );
    assert.deepEqual(await rig.stopWorkers(), [], 'no error-level log line');
  });
});

describe('two worker processes share one concurrency limit per subscription', () => {
  const rig = twoWorkerRig();

  test('after an unhealthy attempt one attempt at a time across both, then one more per healthy answer, back to ten', async () => {
    const { t } = rig;
    const { target: receiver, overLimit, recover } = await recoveringTarget(150);
    rig.closeAfter(receiver);

    await rig.startWorkers();
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `${receiver.url}/grows` });
    await completeCall(t, org.member);
    await waitFor('the first failure', async () => (await healthOf(t.db.pool, hook.id)).consecutive_failures === 1);
    assert.equal((await healthOf(t.db.pool, hook.id)).concurrency_limit, 1);
    // A backlog queued while no worker runs: from then on only the shared limit holds the attempts back.
    assert.deepEqual(await rig.stopWorkers(), [], 'no error-level log line');
    recover();
    const calls = 60;
    for (let i = 0; i < calls; i++) await completeCall(t, org.member);
    const phase = receiver.requests.length;

    await rig.startWorkers();
    const deliveries = await settled(t, hook.id, calls + 1, 20_000);
    assert.ok(deliveries.every((d) => d.status === 'succeeded'));
    assert.deepEqual(overLimit, [], 'never more in flight, in both workers together, than one plus the healthy answers so far');
    const healthy = receiver.requests.slice(phase);
    assert.equal(healthy[0]!.openAtArrival, 1);
    assert.equal(Math.max(...healthy.map((r) => r.openAtArrival)), MAX_IN_FLIGHT_PER_SUBSCRIPTION, 'back to the cap, never past it');
    const final = await healthOf(t.db.pool, hook.id);
    assert.deepEqual([final.concurrency_limit, final.consecutive_failures, final.circuit_state], [null, 0, 'closed']);
    assert.deepEqual(await rig.stopWorkers(), [], 'no error-level log line');
  });
});

describe("two worker processes share the claim fairly: another organization's backlog does not queue ahead", () => {
  const rig = twoWorkerRig();

  test("500 older deliveries over 20 healthy subscriptions: the other organization's one goes out in the first round", async (context) => {
    const { t } = rig;
    // Healthy but not quick: each attempt holds a slot for most of SLOW_ATTEMPT_MS, never past it.
    const ANSWER_MS = SLOW_ATTEMPT_MS - 250;
    const busy = await Promise.all(Array.from({ length: 20 }, () => startHttpsTarget(() => ({ delayMs: ANSWER_MS, status: 204 }))));
    const receiver = await startHttpsTarget(() => ({ status: 204 }));
    rig.closeAfter(...busy, receiver);
    const a = await connectPlatform(t);
    const b = await connectPlatform(t);
    const aHooks: string[] = [];
    for (const [i, target] of busy.entries()) aHooks.push((await subscribeHook(t, a, { hookUrl: `${target.url}/a${i}` })).id);
    const bHook = await subscribeHook(t, b, { hookUrl: `${receiver.url}/b` });
    await answeredBefore(t.db.pool, [...aHooks, bHook.id]);
    // Queued while no worker runs: 25 calls of A (500 deliveries, more than both workers' 128 slots hold
    // in three rounds), then B's one, due last.
    for (let i = 0; i < 25; i++) await completeCall(t, a.member);
    await completeCall(t, b.member);

    await rig.startWorkers();
    const [bRequest] = await receiver.waitForRequests(1, 30_000);
    const aRequests = busy.flatMap((target) => target.requests);
    // Counted, not timed: the first round is what both workers' slots hold, and each of A's attempts holds its slot
    // for ANSWER_MS, so an attempt of A beyond those arrived only once one of the first round's was answered.
    const aBefore = aRequests.filter((r) => r.receivedAt < bRequest!.receivedAt).length;
    const firstA = Math.min(...aRequests.map((r) => r.receivedAt.getTime()));
    context.diagnostic(
      `B's delivery arrived ${bRequest!.receivedAt.getTime() - firstA} ms from A's first attempt, after ${aBefore} of A's (${aRequests.length} so far)`,
    );
    assert.ok(
      aBefore <= 2 * DEFAULT_CONCURRENCY,
      `B's delivery went out in the first round, within both workers' ${2 * DEFAULT_CONCURRENCY} slots (after ${aBefore} of A's)`,
    );

    for (const id of aHooks) assert.ok((await settled(t, id, 25, 30_000)).every((d) => d.status === 'succeeded'));
    assert.deepEqual(await rig.stopWorkers(), [], 'no error-level log line');
  });
});

describe("two worker processes: degraded endpoints hold at most their share of each worker's slots", () => {
  const rig = twoWorkerRig();

  test("five slow endpoints that could take fifty attempts: at most a quarter of each worker's slots, while a healthy endpoint's deliveries flow", async () => {
    const { t } = rig;
    const share = degradedSlots(DEFAULT_CONCURRENCY);
    // One target for every slow endpoint, so its open requests are theirs together. Answered, but after
    // SLOW_ATTEMPT_MS: healthy answers (each may have ten in flight) from endpoints that stay degraded.
    const slow = await startHttpsTarget(() => ({ delayMs: SLOW_ATTEMPT_MS + 100, status: 200 }));
    const healthy = await startHttpsTarget(() => ({ status: 204 }));
    rig.closeAfter(slow, healthy);
    const a = await connectPlatform(t);
    const b = await connectPlatform(t);
    for (let i = 0; i < 5; i++) await subscribeHook(t, a, { hookUrl: `${slow.url}/slow-${i}` });
    const bHook = await subscribeHook(t, b, { hookUrl: `${healthy.url}/b` });
    await answeredBefore(t.db.pool, [bHook.id]);
    // Queued while no worker runs: 20 calls of A (100 deliveries to the slow endpoints).
    for (let i = 0; i < 20; i++) await completeCall(t, a.member);

    await rig.startWorkers();
    await waitFor('both workers holding degraded slots', async () => slow.open > share);
    for (let i = 0; i < 20; i++) await completeCall(t, b.member);
    const bDone = await settled(t, bHook.id, 20);
    assert.ok(bDone.every((d) => d.status === 'succeeded'));
    assert.ok(slow.open > 0, "B's deliveries went through while the slow endpoints were still busy");
    await sleep(2 * SLOW_ATTEMPT_MS);
    const peak = Math.max(...slow.requests.map((r) => r.openAtArrival));
    assert.equal(peak, 2 * share, "the slow endpoints held at most (and used) a quarter of each worker's slots");
    assert.deepEqual(await rig.stopWorkers(), [], 'no error-level log line');
  });
});
