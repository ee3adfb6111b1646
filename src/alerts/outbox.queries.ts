// The alert outbox (migration 0040): alerts, one e-mail per alert and
// recipient, and the statements the sender claims and finishes them with.
// Run on the owner pool by the worker's alert tasks (src/alerts/sender.ts).
import { OWNER_OR_ADMIN_SQL } from '../organizations/roles.ts';
import type { Queryable } from '../db/pool.ts';
import { SMTP_ANSWER_MAX_LENGTH, type AlertDetails, type AlertKind, type AlertSubjectType } from './alert.ts';

export interface NewAlert {
  organizationId: string;
  kind: AlertKind;
  subjectType: AlertSubjectType;
  subjectId: string;
  /** The same key for the same alert, whichever worker's rule finds it: a second insert does nothing. */
  dedupeKey: string;
  details: AlertDetails;
  /** Only the recipients who were sent this alert's e-mail (a "recovered" alert goes to those told of the incident). */
  toRecipientsOf?: string;
}

/**
 * Writes an alert and an e-mail for each owner and admin of its organization
 * who is active and has not turned alerts off there; nothing when the same
 * alert (organization, dedupe key) exists. Returns how many e-mails wait.
 */
export async function enqueueAlert(db: Queryable, alert: NewAlert): Promise<number> {
  const { rowCount } = await db.query(
    `WITH alert AS (
       INSERT INTO alerts (organization_id, kind, subject_type, subject_id, dedupe_key, details)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (organization_id, dedupe_key) DO NOTHING
       RETURNING id, organization_id
     )
     INSERT INTO alert_emails (alert_id, user_id, organization_id, email)
     SELECT a.id, u.id, a.organization_id, u.email
       FROM alert a
       JOIN organizations o ON o.id = a.organization_id AND o.active
       JOIN memberships m ON m.organization_id = a.organization_id AND m.role IN (${OWNER_OR_ADMIN_SQL})
       JOIN users u ON u.id = m.user_id AND u.active
      WHERE NOT EXISTS (SELECT 1 FROM alert_preferences p
                         WHERE p.organization_id = a.organization_id AND p.user_id = u.id AND NOT p.enabled)
        AND ($7::text IS NULL OR u.id IN (
              SELECT e.user_id FROM alerts told JOIN alert_emails e ON e.alert_id = told.id
               WHERE told.organization_id = a.organization_id AND told.dedupe_key = $7 AND e.status = 'sent'))`,
    [
      alert.organizationId,
      alert.kind,
      alert.subjectType,
      alert.subjectId,
      alert.dedupeKey,
      JSON.stringify(alert.details),
      alert.toRecipientsOf ?? null,
    ],
  );
  return rowCount ?? 0;
}

/**
 * An e-mail a claim handed over: leased to one sender, whose lease token is in
 * `alert_emails.claim_token` (the column keeps its name: a rename would stop
 * the previous version's workers during a rolling upgrade), with its
 * recipient and what its alert says.
 */
export interface LeasedEmail {
  alert_id: string;
  user_id: string;
  organization_id: string;
  email: string;
  attempts: number;
  kind: AlertKind;
  subject_type: AlertSubjectType;
  subject_id: string;
  details: AlertDetails;
  alert_created_at: Date;
  organization_name: string;
}

/**
 * The claim: leases up to `limit` due e-mails to this sender (lease token
 * `token`): their next attempt moves `leaseSeconds` ahead, so no other sender
 * takes them meanwhile,
 * and one whose sender died comes due again once that has passed. An e-mail
 * whose recipient may no longer have it (turned alerts off, left the owners
 * and admins, deactivated) is cancelled instead.
 */
export async function claimDueEmails(db: Queryable, token: string, limit: number, leaseSeconds: number): Promise<LeasedEmail[]> {
  const { rows } = await db.query<LeasedEmail>(
    `WITH due AS (
       SELECT e.alert_id, e.user_id,
              EXISTS (SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id AND u.active
                        JOIN organizations o ON o.id = m.organization_id AND o.active
                       WHERE m.organization_id = e.organization_id AND m.user_id = e.user_id AND m.role IN (${OWNER_OR_ADMIN_SQL}))
              AND NOT EXISTS (SELECT 1 FROM alert_preferences p
                               WHERE p.organization_id = e.organization_id AND p.user_id = e.user_id AND NOT p.enabled) AS wanted
         FROM alert_emails e
        WHERE e.status = 'waiting' AND e.next_attempt_at <= now()
        ORDER BY e.next_attempt_at
        LIMIT $2
        FOR UPDATE OF e SKIP LOCKED
     ),
     cancelled AS (
       UPDATE alert_emails e SET status = 'cancelled', finished_at = now(), claim_token = NULL
         FROM due WHERE e.alert_id = due.alert_id AND e.user_id = due.user_id AND NOT due.wanted
     ),
     claimed AS (
       UPDATE alert_emails e
          SET claim_token = $1, attempts = e.attempts + 1, next_attempt_at = now() + make_interval(secs => $3)
         FROM due WHERE e.alert_id = due.alert_id AND e.user_id = due.user_id AND due.wanted
       RETURNING e.alert_id, e.user_id, e.organization_id, e.email, e.attempts
     )
     SELECT c.alert_id, c.user_id, c.organization_id, c.email, c.attempts,
            a.kind, a.subject_type, a.subject_id, a.details, a.created_at AS alert_created_at,
            o.name AS organization_name
       FROM claimed c JOIN alerts a ON a.id = c.alert_id JOIN organizations o ON o.id = c.organization_id
      ORDER BY a.created_at, c.email`,
    [token, limit, leaseSeconds],
  );
  return rows;
}

/** The SMTP server accepted it; false when this sender no longer held its lease (it ran out and another took it). */
export async function markEmailSent(db: Queryable, email: LeasedEmail, token: string, response: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE alert_emails SET status = 'sent', finished_at = now(), smtp_response = $4, last_error = NULL, claim_token = NULL
      WHERE alert_id = $1 AND user_id = $2 AND claim_token = $3 AND status = 'waiting'`,
    [email.alert_id, email.user_id, token, response.slice(0, SMTP_ANSWER_MAX_LENGTH)],
  );
  return rowCount === 1;
}

/** Not sent: due again after `retryInSeconds`, or given up for good (`retryInSeconds` null). */
export async function markEmailFailed(
  db: Queryable,
  email: LeasedEmail,
  token: string,
  error: string,
  retryInSeconds: number | null,
): Promise<void> {
  await db.query(
    `UPDATE alert_emails
        SET last_error = $4, claim_token = NULL,
            status = CASE WHEN $5::float8 IS NULL THEN 'failed' ELSE 'waiting' END,
            finished_at = CASE WHEN $5::float8 IS NULL THEN now() END,
            next_attempt_at = CASE WHEN $5::float8 IS NULL THEN next_attempt_at ELSE now() + make_interval(secs => $5::float8) END
      WHERE alert_id = $1 AND user_id = $2 AND claim_token = $3 AND status = 'waiting'`,
    [email.alert_id, email.user_id, token, error.slice(0, SMTP_ANSWER_MAX_LENGTH), retryInSeconds],
  );
}

export interface FinishedAlert {
  id: string;
  organization_id: string;
  kind: AlertKind;
  subject_type: AlertSubjectType;
  subject_id: string;
  details: AlertDetails;
  recipients: number;
}

/**
 * Alerts whose e-mails have all ended (sent, failed or cancelled), marked
 * recorded; each returned once, with how many of its e-mails were sent. Run
 * by every sender after its own marks committed, the last of two senders
 * finishing one alert sees both marks, and the row's update lets only one of
 * them return it.
 */
export const FINISH_ALERTS = `
  UPDATE alerts a SET recorded_at = now()
   WHERE a.recorded_at IS NULL AND a.id = ANY ($1::uuid[])
     AND NOT EXISTS (SELECT 1 FROM alert_emails e WHERE e.alert_id = a.id AND e.status = 'waiting')
  RETURNING a.id, a.organization_id, a.kind, a.subject_type, a.subject_id, a.details,
            (SELECT count(*)::int FROM alert_emails e WHERE e.alert_id = a.id AND e.status = 'sent') AS recipients`;

export async function finishAlerts(db: Queryable, alertIds: string[]): Promise<FinishedAlert[]> {
  if (alertIds.length === 0) return [];
  const { rows } = await db.query<FinishedAlert>(FINISH_ALERTS, [alertIds]);
  return rows;
}

/** Alerts older than a minute still unrecorded with no e-mail waiting (none had recipients, or a sender died before finishing). */
export async function unfinishedAlertIds(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT a.id FROM alerts a
      WHERE a.recorded_at IS NULL AND a.created_at < now() - interval '1 minute'
        AND NOT EXISTS (SELECT 1 FROM alert_emails e WHERE e.alert_id = a.id AND e.status = 'waiting')
      LIMIT 100`,
  );
  return rows.map((row) => row.id);
}

/** E-mails waiting to be sent (for /metrics). */
export async function countWaitingEmails(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ waiting: number }>(`SELECT count(*)::int AS waiting FROM alert_emails WHERE status = 'waiting'`);
  return rows[0]!.waiting;
}

/**
 * One batch of housekeeping: up to `limit` alerts whose e-mails ended more than
 * 90 days ago, with their e-mails. Every rule looks back less far (an incident's
 * alert belongs to a subscription still active: disabled after five days of
 * failures; the 404 rule's day), so no alert is written again for want of its key.
 */
export async function deleteFinishedAlerts(db: Queryable, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM alerts WHERE id IN (
       SELECT id FROM alerts WHERE recorded_at < now() - interval '90 days' ORDER BY recorded_at LIMIT $1)`,
    [limit],
  );
  return rowCount ?? 0;
}
