// The alert tasks of a worker process: the rules that write alerts and the
// sender that e-mails them, both only with SMTP_URL set (without it nothing
// is written or sent: the dashboard's banner shows open incidents, and the
// audit log has them), and the retention of finished alerts.
import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import { deleteInBatches } from '../db/delete-in-batches.ts';
import type { Pool } from '../db/pool.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { HOURLY_MS, type PeriodicJob, type Task, type TaskHost } from '../tasks/task.ts';
import { createMailer } from './mailer.ts';
import { deleteFinishedAlerts } from './outbox.queries.ts';
import { alertRulesTask } from './rules.ts';
import { alertSenderTask } from './sender.ts';

export interface AlertTaskContext {
  pool: Pool;
  config: Config;
  log: Logger;
  metrics: Metrics;
}

/** Alerts whose e-mails ended more than 90 days ago go, a batch a statement (outbox.queries.ts says why 90 days). */
export function purgeFinishedAlerts(pool: Pool): Promise<number> {
  return deleteInBatches((limit) => deleteFinishedAlerts(pool, limit));
}

/** Housekeeping: hourly, in every process that runs tasks, with SMTP_URL or without (alerts written before stay). */
export function alertHousekeeping({ pool }: Pick<AlertTaskContext, 'pool'>): PeriodicJob[] {
  return [{ name: 'alerts-retention', everyMs: HOURLY_MS, run: () => purgeFinishedAlerts(pool) }];
}

/** The rules and the sender (they run on timers and SMTP connections of their own: a slow SMTP server never holds a delivery up). */
export function alertTasks(host: TaskHost, context: AlertTaskContext): Task[] {
  const { config, log } = context;
  if (!config.smtpUrl) {
    log.info('SMTP_URL is not set: no alert e-mails are sent (open incidents show on the dashboard and in the audit log)');
    return [];
  }
  const sender = alertSenderTask(host, { ...context, mailer: createMailer(config.smtpUrl, config.alertFrom) });
  const rules = alertRulesTask(host, { ...context, onAlerts: () => sender.wake() });
  return [rules, sender];
}
