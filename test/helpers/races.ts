// What the race tests share: run two (or more) sides of a race at the same
// time, each in a loop, for a bounded number of rounds and a bounded time,
// and read the app's captured pino log for error-level lines.
import assert from 'node:assert/strict';
import { pino, type Logger } from 'pino';
import { createProcessCaches, type ProcessCaches } from '../../src/cache/process-caches.ts';
import { listenForInvalidations, type CacheListener } from '../../src/cache/cache-listener.ts';
import type { Registry } from 'prom-client';
import { startTestApp, type TestApp } from './app.ts';
import { adminQuery, createTestDatabase } from './db.ts';
import { startHttpsTarget, type HttpsTarget, type TargetHandler } from './https-target.ts';
import { startTestWorker, WEBHOOK_TEST_ENV } from './webhooks.ts';
import type { DeliveryWorker } from '../../src/webhooks/worker/worker.ts';

export { throughGate, waitForBlockedBy, waitForLockWait } from './lock-waits.ts';

export interface RaceOptions {
  /** Each side stops after this many rounds… */
  rounds: number;
  /** …or once this long has passed since the race began, whichever comes first… */
  maxMs: number;
  /**
   * …unless some side has done fewer than this many rounds (default 20): then
   * every side goes on until each has, or `hardMaxMs` (default 45 s) has
   * passed. An idle machine runs hundreds of rounds in `maxMs`; a loaded one
   * still races the sides this many times instead of a handful.
   */
  minRounds?: number;
  hardMaxMs?: number;
}

/** When one round of a side began and ended (performance.now(), ms). */
export interface Span {
  start: number;
  end: number;
}

/** How many rounds each side did (the array), and when each of its rounds ran (`spans[side]`, in order). */
export type Raced = number[] & { spans: Span[][] };

/**
 * Runs every side concurrently; each side loops on its own (round = 0, 1, …)
 * within the bounds of `options`. Resolves to how many rounds each side did,
 * with when each round ran; rejects with the first error a side throws (the
 * other sides stop at their next round).
 */
export async function race(options: RaceOptions, ...sides: ((round: number) => Promise<unknown>)[]): Promise<Raced> {
  const started = Date.now();
  const minRounds = Math.min(options.minRounds ?? 20, options.rounds);
  const hardMaxMs = Math.max(options.hardMaxMs ?? 45_000, options.maxMs);
  const done = sides.map(() => 0);
  const spans: Span[][] = sides.map(() => []);
  let failed = false;
  const goOn = (round: number) => {
    if (failed || round >= options.rounds) return false;
    const elapsed = Date.now() - started;
    if (elapsed < options.maxMs) return true;
    return elapsed < hardMaxMs && Math.min(...done) < minRounds;
  };
  const rounds = await Promise.all(
    sides.map(async (side, index) => {
      let round = 0;
      try {
        while (goOn(round)) {
          const start = performance.now();
          await side(round++);
          spans[index]!.push({ start, end: performance.now() });
          done[index] = round;
        }
      } catch (error) {
        failed = true;
        throw error;
      }
      return round;
    }),
  );
  return Object.assign(rounds, { spans });
}

/** The captured log lines at level error (50) or above. */
export function errorLines(logs: readonly string[]): string[] {
  return logs.filter((line) => {
    try {
      return (JSON.parse(line) as { level?: number }).level! >= 50;
    } catch {
      return false;
    }
  });
}

export function assertNoErrorLogs(logs: readonly string[]): void {
  const errors = errorLines(logs);
  assert.equal(errors.length, 0, `error-level log lines:\n${errors.slice(0, 5).join('\n')}`);
}

/** Fails on the first answer of 500 or above, naming it. */
export function assertNo5xx(what: string, res: { statusCode: number; body: string }): void {
  assert.ok(res.statusCode < 500, `${what} answered ${res.statusCode}: ${res.body}`);
}

/**
 * A race side's round of ingest: `count` completed calls posted at once (the
 * group commit writes most of them together), every one answered 201.
 * Resolves to the calls' ids.
 */
export async function postCompletedCalls(app: TestApp, headers: Record<string, string>, round: number, count: number): Promise<string[]> {
  const answers = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      app.app.inject({
        method: 'POST',
        url: '/calls',
        headers,
        payload: { summary: `round ${round} call ${i}`, duration_seconds: i },
      }),
    ),
  );
  return answers.map((res) => {
    assertNo5xx('POST /calls', res);
    assert.equal(res.statusCode, 201, res.body);
    return res.json<{ id: string }>().id;
  });
}

/** Sleeps `ms` milliseconds (0 yields to the event loop once). */
export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sums a prom-client counter (all label sets) of the app's registry; 0 when
 * it was never incremented.
 */
export async function counterTotal(registry: Registry, name: string): Promise<number> {
  const metric = await registry.getSingleMetric(name)?.get();
  return metric?.values.reduce((sum, v) => sum + v.value, 0) ?? 0;
}

export interface RaceRig {
  t: TestApp;
  target: HttpsTarget;
  worker: DeliveryWorker;
}

/**
 * Runs `body` with an app (webhook test settings), a real HTTPS target on
 * 127.0.0.1 answering as `respond` says (200 by default), and a delivery
 * worker that logs into the app's captured log (so its error lines count
 * too). Afterwards everything is stopped and, once every connection to the
 * test database has ended (its backends then report their statistics),
 * PostgreSQL's deadlock count for the database must be 0: a deadlock the
 * group commit retries away, or one whose loser answers nothing to a client,
 * shows up nowhere else.
 */
export async function withRaceRig(
  options: {
    env?: Record<string, string>;
    respond?: TargetHandler;
    listen?: boolean;
    /** Run with the credential and read caches kept true by their LISTEN connection, as `serve` does. */
    caches?: boolean;
  },
  body: (rig: RaceRig) => Promise<void>,
): Promise<void> {
  const db = await createTestDatabase();
  let t: TestApp | undefined;
  let target: HttpsTarget | undefined;
  let worker: DeliveryWorker | undefined;
  let caches: ProcessCaches | undefined;
  let cacheListener: CacheListener | undefined;
  try {
    if (options.caches) {
      caches = createProcessCaches({ maxAgeMs: 10_000 });
      cacheListener = await listenForInvalidations(db.url, caches, pino({ level: 'silent' }));
    }
    t = await startTestApp({
      db,
      listen: options.listen ?? false,
      env: { ...WEBHOOK_TEST_ENV, ...options.env },
      ...(caches ? { caches } : {}),
    });
    target = await startHttpsTarget(options.respond);
    worker = await startTestWorker(t, { log: t.app.log as unknown as Logger });
    await body({ t, target, worker });
    await worker.stop();
    worker = undefined;
    await t.close();
    t = undefined;
    await cacheListener?.close();
    cacheListener = undefined;
    await db.pool.end();
    const deadlocks = await deadlocksOf(db.name);
    assert.equal(deadlocks, 0, `PostgreSQL detected ${deadlocks} deadlock(s) in the test database`);
  } finally {
    await worker?.stop();
    await target?.close();
    await t?.close();
    await cacheListener?.close();
    await db.drop().catch(() => {});
  }
}

/**
 * pg_stat_database.deadlocks of a database, once no backend is connected to
 * it (each reports its statistics as it exits): read earlier, a backend still
 * connected may not have reported the deadlock it lost, so a database whose
 * connections do not all end within 30 s fails instead.
 */
export async function deadlocksOf(database: string): Promise<number> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { rows } = await adminQuery(
      'SELECT pid, application_name, state, left(query, 80) AS query FROM pg_stat_activity WHERE datname = $1',
      [database],
    );
    if (rows.length === 0) break;
    if (Date.now() > deadline)
      throw new Error(
        `${rows.length} connection(s) to ${database} still open after 30 s, so its deadlocks are unknown: ${JSON.stringify(rows)}`,
      );
    await pause(50);
  }
  const {
    rows: [stats],
  } = await adminQuery('SELECT deadlocks::int AS n FROM pg_stat_database WHERE datname = $1', [database]);
  return stats.n;
}

/** How many of `spans` share some time (more than an instant) with one of `others` (both in order). */
function overlapping(spans: readonly Span[], others: readonly Span[]): number {
  let count = 0;
  let j = 0;
  for (const span of spans) {
    // Skip the other side's rounds that ended before this one began; the rest begin no earlier than they did.
    while (j < others.length && others[j]!.end <= span.start) j++;
    if (j < others.length && others[j]!.start < span.end) count++;
  }
  return count;
}

/**
 * The sides really ran beside each other: each did at least `rounds` rounds,
 * and at least `overlapping` of each side's rounds ran while a round of every
 * other side was running (a side that finished before another began, or whose
 * rounds took no time, raced nothing). On an idle machine they do hundreds;
 * the bounds are low because a loaded machine does far fewer in the same time.
 */
export function assertRaced(raced: Raced, atLeast: { rounds?: number; overlapping?: number } = {}): void {
  const minRounds = atLeast.rounds ?? 5;
  const minOverlapping = atLeast.overlapping ?? 5;
  assert.ok(
    raced.every((n) => n >= minRounds),
    `every side ran at least ${minRounds} rounds (${raced.join(', ')})`,
  );
  raced.spans.forEach((spans, side) => {
    raced.spans.forEach((others, other) => {
      if (other === side) return;
      const n = overlapping(spans, others);
      assert.ok(n >= minOverlapping, `${n} of side ${side}'s rounds ran beside one of side ${other}'s (at least ${minOverlapping} must)`);
    });
  });
}
