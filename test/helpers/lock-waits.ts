// Locks seen from PostgreSQL, for the tests that must prove two statements ran
// at once: a wait observed in pg_stat_activity (pg_blocking_pids), not
// inferred from time passing, and a gate that lets racing sides go together.
import type { Pool } from '../../src/db/pool.ts';
import { setTimeout as pause } from 'node:timers/promises';

/** Resolves once some statement on the database of `pool` waits for a lock. */
export async function waitForLockWait(pool: Pool): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const {
      rows: [waiting],
    } = await pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
    );
    if (waiting!.n > 0) return;
    if (Date.now() > deadline) throw new Error('no statement waited for a lock within 30 s');
    await pause(10);
  }
}

/**
 * Resolves once `count` statements (default 1) on the database of `pool` wait,
 * in PostgreSQL, for a lock that the backend `blocker` holds: directly
 * (pg_blocking_pids), or behind another waiter that does (a second row-lock
 * waiter waits for the first's tuple lock). The wait itself, seen in
 * PostgreSQL, not inferred from time passing.
 */
export async function waitForBlockedBy(pool: Pool, blocker: number, timeoutMs = 30_000, count = 1): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await pool
      .query<{ n: number }>(
        `WITH RECURSIVE blocked (pid) AS (
         SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND $1 = ANY (pg_blocking_pids(pid))
          UNION
         SELECT a.pid FROM pg_stat_activity a JOIN blocked b ON b.pid = ANY (pg_blocking_pids(a.pid))
          WHERE a.datname = current_database()
       )
       SELECT count(*)::int AS n FROM blocked`,
        [blocker],
      )
      // This observer's own connection, not the code under test: on a starved machine a new backend can take longer
      // than the pool's connect timeout to start, and the next look (within the deadline) tries again.
      .catch((error: Error) => {
        if (/connection timeout/.test(error.message) && Date.now() < deadline) return undefined;
        throw error;
      });
    const waiting = result?.rows[0] ?? { n: 0 };
    if (waiting.n >= count) return;
    if (Date.now() > deadline)
      throw new Error(`${waiting.n} statement(s), not ${count}, waited for a lock of backend ${blocker} within ${timeoutMs} ms`);
    await pause(10);
  }
}

/**
 * Runs every side at once behind a lock they all need and lets them go
 * together: `lock` (SQL with `params`) is taken in a transaction of the test,
 * the sides start, and the lock is released only once `waiters` statements
 * (default: one per side) wait for it in PostgreSQL. So each side had begun,
 * its statement's snapshot taken, before any could finish: the overlap a race
 * test relies on, proven whatever the machine's load, instead of hoped for
 * from two calls started in one tick. Resolves to the sides' results.
 */
export async function throughGate<T extends readonly unknown[]>(
  pool: Pool,
  gate: { lock: string; params?: unknown[]; waiters?: number },
  sides: { [K in keyof T]: () => Promise<T[K]> },
): Promise<T> {
  const holder = await pool.connect();
  let running: Promise<T> | undefined;
  try {
    await holder.query('BEGIN');
    const { pid } = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!;
    await holder.query(gate.lock, gate.params ?? []);
    running = Promise.all(sides.map((side) => side())) as unknown as Promise<T>;
    const finishedEarly = running.then(() => {
      throw new Error('a side finished while the gate was closed: it never needed the lock');
    });
    await Promise.race([waitForBlockedBy(pool, pid, 30_000, gate.waiters ?? sides.length), finishedEarly]);
    await holder.query('COMMIT');
  } catch (error) {
    await holder.query('ROLLBACK').catch(() => {});
    await running?.catch(() => {});
    throw error;
  } finally {
    holder.release();
  }
  return running;
}
