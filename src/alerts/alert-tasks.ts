// The alert tasks of a worker process: the rules that write alerts and the
// sender that e-mails them, both only with SMTP_URL set. Without it nothing
// is written or sent: the dashboard's banner shows open incidents, and the
// audit log has them.
import type { BackgroundTask, TaskContext } from '../background.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { createMailer } from './mailer.ts';
import { startAlertRules } from './rules.ts';
import { startAlertSender } from './sender.ts';

export function startAlertTasks(context: TaskContext & { metrics: Metrics }): BackgroundTask[] {
  const { config, log } = context;
  if (!config.smtpUrl) {
    log.info('SMTP_URL is not set: no alert e-mails are sent (open incidents show on the dashboard and in the audit log)');
    return [];
  }
  const sender = startAlertSender({ ...context, mailer: createMailer(config.smtpUrl, config.alertFrom) });
  const rules = startAlertRules({ ...context, onAlerts: () => sender.wake() });
  return [rules, sender];
}
