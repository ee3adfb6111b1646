// What the endpoint-health tests share: a subscription's endpoint health as
// the database holds it (the webhook_subscriptions columns
// app_endpoint_health_after moves), a logger whose error lines a test can
// check, what the machine's load did to a latency bound, and a pause.
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import type { TestContext } from 'node:test';
import type { Queryable } from '../../src/db/pool.ts';
import { MAX_IN_FLIGHT_PER_SUBSCRIPTION, SLOW_ATTEMPT_MS } from '../../src/webhooks/worker/endpoint-health.ts';
import type { TestApp } from './app.ts';
import { startHttpsTarget, type TargetResponse } from './https-target.ts';
import { connectPlatform, subscribeHook } from './webhooks.ts';
import type { Member } from './fixtures.ts';
import type { HttpsTarget } from './https-target.ts';
import { completeCall, waitFor } from './webhooks.ts';

export interface EndpointHealthRow {
  concurrency_limit: number | null;
  consecutive_failures: number;
  slow: boolean;
  circuit_state: 'closed' | 'open';
  circuit_changed_at: Date | null;
  circuit_retry_at: Date | null;
  circuit_opens: number;
  /** Its endpoint has answered in time at least once. */
  answered: boolean;
  /** circuit_retry_at − circuit_changed_at: the wait the circuit opened for (null when closed). */
  wait_ms: number | null;
  /** What GET /webhooks shows: closed, open, or probing (open, its wait over). */
  shown: 'closed' | 'open' | 'probing';
}

export async function healthOf(db: Queryable, subscriptionId: string): Promise<EndpointHealthRow> {
  const { rows } = await db.query<EndpointHealthRow>(
    `SELECT concurrency_limit, consecutive_failures, slow, circuit_state, circuit_changed_at, circuit_retry_at, circuit_opens, answered,
            round(extract(epoch FROM circuit_retry_at - circuit_changed_at) * 1000)::int AS wait_ms,
            app_circuit_shown(circuit_state, circuit_retry_at) AS shown
       FROM webhook_subscriptions WHERE id = $1`,
    [subscriptionId],
  );
  if (!rows[0]) throw new Error(`no subscription ${subscriptionId}`);
  return rows[0];
}

/** A logger for a worker under test, at info level, whose error-level lines (and worse) are kept. */
export function capturingLogger(): { log: Logger; errors(): string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      callback();
    },
  });
  const log = pino({ level: 'info' }, stream);
  return { log, errors: () => lines.filter((line) => (JSON.parse(line) as { level: number }).level >= 50) };
}

/** Error-level lines (and worse) in a worker process's output (JSON lines, LOG_LEVEL warn). */
export function errorLines(output: string): string[] {
  return output.split('\n').filter((line) => {
    if (!line.startsWith('{')) return false;
    try {
      return (JSON.parse(line) as { level?: number }).level! >= 50;
    } catch {
      return false;
    }
  });
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * An answer a target holds until the test calls `release()`, and for at
 * least `minHoldMs` after the request arrived: a probe the test looks at
 * while it is surely in flight, however slowly the machine runs (released
 * before the worker's time-out cuts it).
 */
export function heldAnswer(response: TargetResponse, minHoldMs: number) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  return {
    release,
    async answer(): Promise<TargetResponse> {
      await Promise.all([released, sleep(minHoldMs)]);
      return response;
    },
  };
}

/**
 * Watches what a latency bound depends on besides the code under test: this
 * process's event-loop delay and PostgreSQL's round-trip time (a worker's
 * attempt counts as in flight until its outcome is recorded, so a slow
 * database makes a healthy endpoint look slow). `describe()` says what was seen.
 */
export function watchConditions(db: Queryable): { describe(): string; stop(): Promise<void> } {
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  let slowestQueryMs = 0;
  let watching = true;
  const pinging = (async () => {
    while (watching) {
      const started = Date.now();
      await db.query('SELECT 1').catch(() => {});
      slowestQueryMs = Math.max(slowestQueryMs, Date.now() - started);
      await sleep(50);
    }
  })();
  return {
    describe: () =>
      `this process's event loop was delayed up to ${Math.round(loop.max / 1e6)} ms (mean ${Math.round(loop.mean / 1e6)} ms); ` +
      `PostgreSQL answered SELECT 1 in up to ${slowestQueryMs} ms`,
    async stop() {
      watching = false;
      loop.disable();
      await pinging;
    },
  };
}

/**
 * How long a neighbour's delivery may take from when it could go: what a
 * loaded 2-core machine gives (two worker processes there took up to 2.1 s;
 * an idle machine takes tens of milliseconds).
 */
export const NEIGHBOUR_DELIVERY_MS = 3000;

/**
 * Attempts to hanging endpoints are cut after this, well past
 * SLOW_ATTEMPT_MS + NEIGHBOUR_DELIVERY_MS: a neighbour delivered in time was
 * not waiting for a slot that only a time-out freed.
 */
export const HANGING_TIMEOUT_MS = 6000;

/**
 * The neighbour check, once every slot hangs on one organization's endpoints
 * (from `fullAt`): the other organization completes a call every 250 ms, past
 * the hanging attempts' time-outs, the circuits opening and their probes, and
 * each must reach `receiver` within NEIGHBOUR_DELIVERY_MS of when it could.
 * An attempt is known to hang only once it has run SLOW_ATTEMPT_MS, so a call
 * made before then may wait for that. The diagnostic gives each delivery's
 * time and what the machine's load did meanwhile (a process starved of CPU,
 * or a database slow to answer, delays deliveries whatever the claim does).
 * Returns the calls made.
 */
export async function assertNeighbourDelivered(
  context: TestContext,
  input: { t: TestApp; member: Member; receiver: HttpsTarget; fullAt: number },
): Promise<{ id: string; at: number }[]> {
  const { t, member, receiver, fullAt } = input;
  const conditions = watchConditions(t.db.pool);
  const sent: { id: string; at: number }[] = [];
  const idOf = (r: { body: string }) => (JSON.parse(r.body) as { id: string }).id;
  const arrivedAt = (id: string) => receiver.requests.find((r) => idOf(r) === id)!.receivedAt.getTime();
  try {
    while (Date.now() - fullAt < HANGING_TIMEOUT_MS + 2000) {
      const call = await completeCall(t, member, { summary: `neighbour ${sent.length}` });
      // From the call's commit (its transaction's time): the API's own time is not the workers'.
      sent.push({ id: call.id, at: Date.parse(call.created_at) });
      await sleep(250);
    }
    await waitFor(
      'every call of the other organization delivered',
      async () => sent.every((call) => receiver.requests.some((r) => idOf(r) === call.id)),
      15_000,
    ).catch((error: Error) => {
      const seen = receiver.requests.map(
        (r) => `${sent.findIndex((c) => c.id === idOf(r))}#${r.headers['x-delivery-attempt']}@${r.receivedAt.getTime() - fullAt}`,
      );
      throw new Error(`${error.message}; received: ${seen.join(' ')}`);
    });
  } finally {
    await conditions.stop();
  }
  const late = sent
    .filter((call) => arrivedAt(call.id) - Math.max(call.at, fullAt + SLOW_ATTEMPT_MS) > NEIGHBOUR_DELIVERY_MS)
    .map((call) => `a call made ${call.at - fullAt} ms after the slots filled arrived ${arrivedAt(call.id) - call.at} ms later`);
  const starved = conditions.describe();
  context.diagnostic(`the other organization's deliveries took ${sent.map((c) => arrivedAt(c.id) - c.at).join(', ')} ms; ${starved}`);
  assert.deepEqual(late, [], `every delivery of the other organization arrives within ${NEIGHBOUR_DELIVERY_MS} ms (${starved})`);
  return sent;
}

/**
 * Samples `read` every 20 ms until `stop()`, which resolves to the largest
 * value seen and how many samples were taken: a cap checked all the while,
 * not once.
 */
export function watchPeak(read: () => Promise<number>): { stop(): Promise<{ peak: number; samples: number }> } {
  let watching = true;
  let peak = Number.NEGATIVE_INFINITY;
  let samples = 0;
  const sampling = (async () => {
    while (watching) {
      peak = Math.max(peak, await read());
      samples++;
      await sleep(20);
    }
  })();
  return {
    async stop() {
      watching = false;
      await sampling;
      return { peak, samples };
    },
  };
}

/**
 * The subscriptions' endpoints have answered before (established endpoints
 * that go bad, or stay healthy): an endpoint that never answered counts as
 * degraded from its first attempt (endpoint-health.ts), which is another case.
 */
export async function answeredBefore(db: Queryable, subscriptionIds: readonly string[]): Promise<void> {
  await db.query('UPDATE webhook_subscriptions SET answered = true WHERE id = ANY($1)', [subscriptionIds]);
}

/**
 * Organization A with `count` subscriptions whose endpoints accept the
 * connection and never answer, and organization B with one that answers 204
 * at once. `aAnsweredBefore`: A's endpoints worked until now (B's always has),
 * so they take healthy slots until their attempts are known slow; otherwise
 * they are new and share the degraded slots from their first attempt. The caller
 * closes `targets`.
 */
export async function hangingBesideHealthy(t: TestApp, count: number, options: { aAnsweredBefore: boolean }) {
  const hanging = await Promise.all(Array.from({ length: count }, () => startHttpsTarget(() => ({ hang: true }))));
  const receiver = await startHttpsTarget(() => ({ status: 204 }));
  const a = await connectPlatform(t);
  const b = await connectPlatform(t);
  const aHooks: string[] = [];
  for (const [i, target] of hanging.entries()) aHooks.push((await subscribeHook(t, a, { hookUrl: `${target.url}/a${i}` })).id);
  const bHook = await subscribeHook(t, b, { hookUrl: `${receiver.url}/b` });
  await answeredBefore(t.db.pool, options.aAnsweredBefore ? [...aHooks, bHook.id] : [bHook.id]);
  return { a, b, hanging, receiver, bHook, targets: [...hanging, receiver] };
}

/**
 * An endpoint that fails (500 at once) until `recover()`, then answers 200
 * after `answerMs`, and holds every arrival after that against the adaptive
 * limit: one attempt in flight, plus one per healthy answer given so far
 * (counted before any worker can see it), up to the cap. `overLimit` lists
 * the arrivals that broke it. The caller closes `target`.
 */
export async function recoveringTarget(answerMs: number) {
  let failing = true;
  let answered = 0;
  const overLimit: string[] = [];
  const target = await startHttpsTarget(async (request) => {
    if (failing) return { status: 500 };
    const allowed = Math.min(MAX_IN_FLIGHT_PER_SUBSCRIPTION, 1 + answered);
    if (request.openAtArrival > allowed) overLimit.push(`${request.openAtArrival} in flight after ${answered} healthy answers`);
    await sleep(answerMs);
    answered++;
    return { status: 200 };
  });
  return {
    target,
    overLimit,
    recover() {
      failing = false;
    },
  };
}
