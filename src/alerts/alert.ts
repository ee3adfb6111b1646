// What an alert is about, as the outbox stores it (alerts.details) and the
// e-mail templates read it.

/**
 * - `incident`: a subscription's circuit has been open for ALERT_AFTER (one per incident);
 * - `recovered`: an incident its recipients were told of ended with a healthy answer;
 * - `disabled`: a subscription was disabled after days of failures (`delivery_failures`);
 * - `failing`: deliveries failed for good while the circuit stayed closed (a 404; at most one a subscription a day);
 * - `revoked`: a connection was revoked for `refresh_reuse` or `code_replay`.
 */
export const ALERT_KINDS = ['incident', 'recovered', 'disabled', 'failing', 'revoked'] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];
export type AlertSubjectType = 'subscription' | 'client';

/** What the outbox keeps of an SMTP server's answer or error (alert_emails.smtp_response, last_error). */
export const SMTP_ANSWER_MAX_LENGTH = 1000;
/** An alert's subject: a subscription's id or a client's client_id (alerts.subject_id, as audit_events.subject_id). */
export const ALERT_SUBJECT_MAX_LENGTH = 200;
/** An alert's key: its kind, then the id of what it follows from (alerts.dedupe_key). */
export const DEDUPE_KEY_MAX_LENGTH = 300;

export interface AlertDetails {
  /** The app's name (the OAuth client's), and its client_id. */
  app: string;
  client_id: string;
  /** The receiver's URL as alerts show it, scheme and host only (a subscription's alerts). */
  url?: string;
  /** Since when (ISO 8601): the incident's first opening, the disable, the first failure, the revocation. */
  since: string;
  /** When it ended (a recovered incident). */
  ended_at?: string;
  /** Deliveries waiting for the receiver when the alert was written. */
  waiting?: number;
  /** Deliveries that failed for good (the 404 rule), since the rule's last look. */
  failed?: number;
  /** The audit event the alert was derived from (the incident's circuit.opened, the disable, the revocation). */
  event_id?: string;
  /** The revocation's or the disable's reason. */
  reason?: string;
  /** Subscriptions the revocation stopped. */
  subscriptions?: number;
}

/** The receiver's host, as the subject names it; the URL itself when it does not parse. */
export function receiverHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
