// Every task of `serve` and `worker`, in one list: each capability exports its
// own (built on src/tasks), and this module only gathers them. A process
// that runs tasks starts them all, in this order, and stops them all before
// it closes its pool.
import type { Logger } from 'pino';
import { alertHousekeeping, alertTasks } from './alerts/alert-tasks.ts';
import { auditHousekeeping } from './audit/retention.ts';
import { authHousekeeping } from './auth/auth.tasks.ts';
import { callsHousekeeping } from './calls/calls.tasks.ts';
import type { Config } from './config/config.ts';
import type { SecretBox } from './crypto/secret-box.ts';
import type { KeyRing } from './crypto/key-ring.ts';
import { isDatabaseUnavailable } from './db/availability.ts';
import type { Pool } from './db/pool.ts';
import { tableStatisticsJob } from './db/table-statistics.ts';
import { keyCheckTask } from './key-rotation/key-check.ts';
import type { Metrics } from './metrics/metrics.ts';
import { oauthHousekeeping } from './oauth/oauth.maintenance.ts';
import { outageWatch } from './tasks/outage.ts';
import { periodic, type PeriodicJob, type Task, type TaskHost } from './tasks/task.ts';
import { deliveryLogHousekeeping } from './webhooks/worker/retention.ts';
import { deliveryWorkerTask } from './webhooks/worker/worker.ts';

export interface TaskContext {
  pool: Pool;
  config: Config;
  log: Logger;
}

/** The hourly housekeeping of every capability (tests and tools run each once, by hand). */
export function housekeepingJobs({ pool, config }: Pick<TaskContext, 'pool' | 'config'>): PeriodicJob[] {
  return [
    ...authHousekeeping({ pool }),
    ...oauthHousekeeping({ pool, refreshReuseGrace: config.refreshReuseGrace }),
    ...deliveryLogHousekeeping({ pool }),
    ...callsHousekeeping({ pool }),
    ...auditHousekeeping({ pool, retentionMs: config.auditRetentionMs }),
    ...alertHousekeeping({ pool }),
  ];
}

/** What a process shares among its tasks: its log and its one view of the database's outages. */
export function taskHost(log: Logger): TaskHost {
  return { log, outage: outageWatch(log, isDatabaseUnavailable) };
}

/** Housekeeping and the statistics of grown tables (db/table-statistics.ts). */
export function maintenanceTasks(host: TaskHost, context: TaskContext): Task[] {
  return [...housekeepingJobs(context), tableStatisticsJob(context)].map((job) => periodic(host, job));
}

export interface WorkerTaskContext extends TaskContext {
  metrics: Metrics;
  keys: KeyRing;
  secretBox: SecretBox;
  /** For the delivery worker's LISTEN connection. */
  databaseUrl: string;
  /** How long the delivery worker lets running attempts finish when stopped. */
  drainMs: number;
}

/** Every task of a process that delivers webhooks (`worker`, and `serve` with its worker). */
export function workerTasks(context: WorkerTaskContext): Task[] {
  const host = taskHost(context.log);
  const { pool, config, log, metrics } = context;
  return [
    ...maintenanceTasks(host, context),
    keyCheckTask({ pool, keys: context.keys, log }),
    ...alertTasks(host, { pool, config, log, metrics }),
    deliveryWorkerTask({
      pool,
      config,
      log,
      metrics,
      databaseUrl: context.databaseUrl,
      secretBox: context.secretBox,
      drainMs: context.drainMs,
      outage: host.outage,
    }),
  ];
}
