// What the endpoint-health tests share: a subscription's health as the
// database holds it (migration 0022), a logger whose error lines a test can
// check, what the machine's load did to a latency bound, and a pause.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import type { Queryable } from '../../src/db/pool.ts';

export interface SubscriptionHealth {
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

export async function healthOf(db: Queryable, subscriptionId: string): Promise<SubscriptionHealth> {
  const { rows } = await db.query<SubscriptionHealth>(
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
