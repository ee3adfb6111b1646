// What the race tests share: run two (or more) sides of a race at the same
// time, each in a loop, for a bounded number of rounds and a bounded time,
// and read the app's captured pino log for error-level lines.
import assert from 'node:assert/strict';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { startTestApp, type TestApp } from './app.ts';
import { startHttpsTarget, type HttpsTarget, type TargetHandler } from './https-target.ts';
import { startTestWorker, WEBHOOK_TEST_ENV } from './webhooks.ts';
import type { DeliveryWorker } from '../../src/webhooks/delivery/worker.ts';

export interface RaceOptions {
  /** Each side stops after this many rounds… */
  rounds: number;
  /** …or once this long has passed since the race began, whichever comes first. */
  maxMs: number;
}

/**
 * Runs every side concurrently; each side loops on its own (round = 0, 1, …)
 * until it has done `rounds` rounds or `maxMs` is up. Resolves to how many
 * rounds each side did; rejects with the first error a side throws (the
 * other sides stop at their next round).
 */
export async function race(options: RaceOptions, ...sides: ((round: number) => Promise<unknown>)[]): Promise<number[]> {
  const deadline = Date.now() + options.maxMs;
  let failed = false;
  return Promise.all(sides.map(async (side) => {
    let round = 0;
    try {
      while (!failed && round < options.rounds && Date.now() < deadline) await side(round++);
    } catch (error) {
      failed = true;
      throw error;
    }
    return round;
  }));
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
  close(): Promise<void>;
}

/**
 * An app with the webhook test settings, a real HTTPS target on 127.0.0.1 and
 * a delivery worker that logs into the app's captured log (so its error lines
 * count too). The target answers as `respond` says (200 by default).
 */
export async function startRaceRig(options: { env?: Record<string, string>; respond?: TargetHandler; listen?: boolean } = {}): Promise<RaceRig> {
  const t = await startTestApp({ listen: options.listen ?? false, env: { ...WEBHOOK_TEST_ENV, ...options.env } });
  const target = await startHttpsTarget(options.respond);
  const worker = await startTestWorker(t, { log: t.app.log as unknown as Logger });
  let closed = false;
  return {
    t,
    target,
    worker,
    async close() {
      if (closed) return;
      closed = true;
      await worker.stop();
      await target.close();
      await t.close();
    },
  };
}
