// What the race tests share: run two (or more) sides of a race at the same
// time, each in a loop, for a bounded number of rounds and a bounded time,
// and read the app's captured pino log for error-level lines.
import assert from 'node:assert/strict';

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
