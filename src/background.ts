// Background work that runs beside the HTTP server (and in `switchboard worker`).
// Each task is started with the pool and returns a stop function; the server
// stops them all before it closes the database.
import type { Logger } from 'pino';
import type { Config } from './config/config.ts';
import type { Pool } from './db/pool.ts';
import { analyzeGrownTables, STATISTICS_CHECK_MS } from './db/table-statistics.ts';
import { deleteStaleFailures } from './auth/login-throttle.queries.ts';
import { deleteExpiredSessions } from './auth/sessions.queries.ts';
import { purgeExpiredIdempotencyKeys } from './calls/idempotency.ts';
import { purgeExpiredOAuthRows } from './oauth/oauth.maintenance.ts';
import { purgeDeliveryLog } from './webhooks/worker/retention.ts';
import { purgeAuditLog } from './audit/retention.ts';
import { purgeFinishedAlerts } from './alerts/outbox.queries.ts';

export interface BackgroundTask {
  name: string;
  stop(): Promise<void>;
}

export interface TaskContext {
  pool: Pool;
  config: Config;
  log: Logger;
}

/** Calls fn every intervalMs (first run after one interval) until stopped; errors are logged, not fatal. */
export function every(name: string, intervalMs: number, log: Logger, fn: () => Promise<unknown>): BackgroundTask {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = fn().catch((error) => log.error({ err: error, task: name }, 'background task failed'));
  }, intervalMs);
  timer.unref();
  return {
    name,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

const MAINTENANCE_INTERVAL_MS = 3_600_000;

/** The housekeeping jobs, each run once by `run` (startMaintenance repeats them; tests run them on demand). */
export function maintenanceJobs({ pool, config }: Pick<TaskContext, 'pool' | 'config'>): { name: string; run: () => Promise<unknown> }[] {
  return [
    { name: 'sessions-cleanup', run: () => deleteExpiredSessions(pool) },
    { name: 'login-failures-cleanup', run: () => deleteStaleFailures(pool) },
    { name: 'oauth-cleanup', run: () => purgeExpiredOAuthRows(pool, config.refreshReuseGrace) },
    { name: 'webhook-log-retention', run: () => purgeDeliveryLog(pool) },
    { name: 'idempotency-keys-cleanup', run: () => purgeExpiredIdempotencyKeys(pool) },
    { name: 'audit-log-retention', run: () => purgeAuditLog(pool, config.auditRetentionMs) },
    { name: 'alerts-retention', run: () => purgeFinishedAlerts(pool) },
  ];
}

/**
 * Housekeeping every process runs hourly: expired sessions, codes, tokens and idempotency keys; delivery attempts
 * older than 30 days; audit events older than AUDIT_RETENTION. And every few seconds, statistics of the tables that have grown (db/table-statistics.ts).
 */
export function startMaintenance(context: TaskContext): BackgroundTask[] {
  return [
    ...maintenanceJobs(context).map((job) => every(job.name, MAINTENANCE_INTERVAL_MS, context.log, job.run)),
    every('table-statistics', STATISTICS_CHECK_MS, context.log, () => analyzeGrownTables(context.pool, context.log)),
  ];
}
