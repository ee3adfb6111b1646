// The alert sender: a background task of `switchboard worker` (and of `serve`
// with its worker) that sends the outbox's due e-mails over SMTP_URL. It uses
// its own short statements on the owner pool and its own SMTP connections, and
// runs on timers of its own, so a slow or absent SMTP server delays alerts,
// never a webhook delivery.
//
// One e-mail per alert and recipient across any number of senders, in the
// delivery engine's words (docs/delivery-engine.md, "Words"): a claim (FOR
// UPDATE SKIP LOCKED) leases the e-mail to this sender, moving its next
// attempt past the lease, so no other sender takes it while this one sends;
// the mark after the SMTP server's answer is made under the lease's token and
// holds only while the lease does. A sender that dies between
// the server's acceptance and its mark leaves the e-mail to come due once the
// lease has passed: sent once more, never more, since the lease outlasts any
// send (SMTP_TIMEOUT_MS per wait).
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import type { Pool } from '../db/pool.ts';
import { withTransaction } from '../db/transaction.ts';
import { jitter } from '../tasks/jitter.ts';
import { periodic, type PeriodicJob, type Task, type TaskHost } from '../tasks/task.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { recordAlertsSent } from './alert-events.ts';
import { describeSmtpFailure, type Mailer } from './mailer.ts';
import { claimDueEmails, finishAlerts, markEmailFailed, markEmailSent, unfinishedAlertIds, type LeasedEmail } from './outbox.queries.ts';
import { renderAlert } from './templates.ts';

/** How often a sender looks for due e-mails. */
export const SEND_POLL_MS = 2000;
/** E-mails one look takes at most; they are sent at once, each on its own connection. */
const BATCH = 10;
/** A leased e-mail is this sender's for this long: far beyond one send's time-outs. */
export const LEASE_SECONDS = 300;
/** After a failed send: 5 s, doubling, at most 30 minutes (±10 %). */
const FIRST_RETRY_SECONDS = 5;
const MAX_RETRY_SECONDS = 1800;
/** An e-mail still unsent this long after its alert is given up (failed). */
const GIVE_UP_MS = 3 * 86_400_000;

export function retryDelaySeconds(attempts: number, random: () => number = Math.random): number {
  const base = Math.min(MAX_RETRY_SECONDS, FIRST_RETRY_SECONDS * 2 ** Math.max(0, attempts - 1));
  return jitter(base, random);
}

export interface AlertSenderOptions {
  pool: Pool;
  config: Config;
  log: Logger;
  metrics: Metrics;
  mailer: Mailer;
}

/** Sends one leased e-mail and records what happened; never throws for an SMTP failure. */
async function sendOne(options: AlertSenderOptions, email: LeasedEmail, leaseToken: string): Promise<void> {
  const { pool, config, log, metrics, mailer } = options;
  const message = renderAlert(email, { baseUrl: config.baseUrl, organizationName: email.organization_name });
  let response: string;
  try {
    response = await mailer.send(email.email, message);
  } catch (error) {
    metrics.alertsFailed.inc();
    const failure = describeSmtpFailure(error);
    const expired = Date.now() - email.alert_created_at.getTime() > GIVE_UP_MS;
    const retryIn = failure.permanent || expired ? null : retryDelaySeconds(email.attempts);
    log.warn(
      {
        alert_id: email.alert_id,
        kind: email.kind,
        attempts: email.attempts,
        retry_in_s: retryIn && Math.round(retryIn),
        err: failure.message,
      },
      retryIn === null ? 'alert e-mail given up' : 'alert e-mail not sent; retrying later',
    );
    await markEmailFailed(pool, email, leaseToken, failure.message, retryIn);
    return;
  }
  metrics.alertsSent.inc();
  const held = await markEmailSent(pool, email, leaseToken, response);
  log.info({ alert_id: email.alert_id, kind: email.kind, held, smtp: response.slice(0, 200) }, 'alert e-mail sent');
}

/** Writes alert.sent for the alerts whose e-mails have all ended, each once, in the transaction that marks them. */
async function finish(pool: Pool, alertIds: string[]): Promise<void> {
  if (alertIds.length === 0) return;
  await withTransaction(pool, async (client) => {
    const finished = await finishAlerts(client, alertIds);
    await recordAlertsSent(client, finished);
  });
}

/** One look: claim (lease), send, mark, finish. Returns how many e-mails it leased. */
export async function sendDueAlerts(options: AlertSenderOptions): Promise<number> {
  const leaseToken = randomUUID();
  const leased = await claimDueEmails(options.pool, leaseToken, BATCH, LEASE_SECONDS);
  await Promise.all(leased.map((email) => sendOne(options, email, leaseToken)));
  await finish(options.pool, [...new Set(leased.map((email) => email.alert_id))]);
  return leased.length;
}

/** How long stopping waits for sends on their way; an e-mail cut off comes due again after its lease. */
const STOP_WAIT_MS = 5000;
/** Every this many looks, the alerts no e-mail will finish (none had recipients; a sender died before finishing). */
const FINISH_STRAYS_EVERY = 30;

/** The sender as a task: a look every SEND_POLL_MS, at once again after a full batch, and when the rules wake it. */
export function alertSenderTask(host: TaskHost, options: AlertSenderOptions): Task {
  let looks = 0;
  const job: PeriodicJob = {
    name: 'alert-sender',
    everyMs: SEND_POLL_MS,
    async run(tick) {
      const full = (await sendDueAlerts(options)) === BATCH;
      if (!tick.stopping && ++looks % FINISH_STRAYS_EVERY === 0) await finish(options.pool, await unfinishedAlertIds(options.pool));
      return full;
    },
  };
  return periodic(host, job, { stopWaitMs: STOP_WAIT_MS, stopped: () => options.mailer.close() });
}
