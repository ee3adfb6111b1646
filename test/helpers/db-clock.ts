// Bounds on a time the database wrote (now() + a delay), measured from the
// event the code starts from: the statement ran somewhere between the two
// readings of the database's own clock taken around the call, however long a
// loaded machine made that call take.
import assert from 'node:assert/strict';
import type { Pool } from '../../src/db/pool.ts';

/** When `look` ran, on the database's clock (epoch seconds): just before it began and just after it ended. */
export interface Window {
  from: number;
  to: number;
}

/** Runs `look` between two readings of the database's clock. */
export async function timed(pool: Pool, look: () => Promise<void>): Promise<Window> {
  const clock = async () => (await pool.query<{ s: number }>('SELECT extract(epoch FROM clock_timestamp())::float8 AS s')).rows[0]!.s;
  const from = await clock();
  await look();
  return { from, to: await clock() };
}

/**
 * `dueAt` (epoch seconds) is `seconds` after a statement run within `window`,
 * give or take `jitter` (a fraction: 0.1 for ±10 %), and 1 ms either side for
 * the epoch as a float.
 */
export function assertDueAfter(dueAt: number, window: Window, seconds: number, jitter: number, what: string): void {
  const [earliest, latest] = [window.from + seconds * (1 - jitter) - 0.001, window.to + seconds * (1 + jitter) + 0.001];
  assert.ok(
    dueAt >= earliest && dueAt <= latest,
    `${what}: ${seconds} s ± ${jitter * 100} % after it, due ${(dueAt - window.from).toFixed(3)} s after the call began, which took ${(window.to - window.from).toFixed(3)} s`,
  );
}
