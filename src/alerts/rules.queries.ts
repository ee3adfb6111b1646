// What the alert rules read (src/alerts/rules.ts): each rule finds its alerts
// in what is already written, the audit log (circuit.opened, circuit.closed,
// subscription.disabled, grant.revoked) and the delivery log (deliveries that
// failed for good), so the delivery engine writes nothing for alerts.
import type { Queryable } from '../db/pool.ts';

export type ScanRule = 'failing' | 'events';

/**
 * Takes a rule's row for this transaction (its lock: another worker's look at
 * the same rule skips) and returns where its last look ended, never more than
 * a day back (a deployment that turns SMTP_URL on is not told of old news), or
 * undefined when another worker is looking now.
 */
export async function lockScan(db: Queryable, rule: ScanRule): Promise<{ from: Date; until: Date } | undefined> {
  const { rows } = await db.query<{ from: Date; until: Date }>(
    `SELECT greatest(scanned_until, now() - interval '1 day') AS from, now() AS until
       FROM alert_scans WHERE rule = $1 FOR UPDATE SKIP LOCKED`,
    [rule],
  );
  return rows[0];
}

export async function saveScan(db: Queryable, rule: ScanRule, until: Date): Promise<void> {
  await db.query('UPDATE alert_scans SET scanned_until = $2 WHERE rule = $1', [rule, until]);
}

/** A subscription an alert is about, with what its e-mail says. */
export interface SubscriptionFacts {
  subscription_id: string;
  organization_id: string;
  client_id: string;
  app: string;
  /** Its hook URL as alerts show it: scheme and host only (app_hook_url_shown; the path may hold the receiver's secret). */
  url: string;
  /** Deliveries waiting for it now (pending). */
  waiting: number;
}

const SUBSCRIPTION_FACTS = `s.id AS subscription_id, s.organization_id, s.client_id, c.name AS app, app_hook_url_shown(s.callback_url) AS url,
  (SELECT count(*)::int FROM webhook_deliveries w WHERE w.subscription_id = s.id AND w.status = 'pending') AS waiting`;

export interface FailingSubscription extends SubscriptionFacts {
  first_failed_at: Date;
  failed: number;
}

/**
 * Active subscriptions with their circuit closed whose deliveries failed for
 * good (the last attempt's outcome `failed`: retries spent, not dropped by a
 * stop) since their circuit last closed and between `from` (less a minute, for records committed late) and
 * `until`, and with no such alert in the last 24 hours. Per subscription, an
 * index probe of its failed deliveries (webhook_deliveries_failed_finished_idx).
 */
export async function findFailingSubscriptions(db: Queryable, from: Date, until: Date): Promise<FailingSubscription[]> {
  const { rows } = await db.query<FailingSubscription>(
    `SELECT ${SUBSCRIPTION_FACTS}, f.first_failed_at, f.failed
       FROM webhook_subscriptions s
       JOIN oauth_clients c ON c.client_id = s.client_id
       CROSS JOIN LATERAL (
         SELECT min(d.finished_at) AS first_failed_at, count(*)::int AS failed
           FROM webhook_deliveries d
          WHERE d.subscription_id = s.id AND d.status = 'failed'
            AND d.finished_at > $1::timestamptz - interval '1 minute' AND d.finished_at <= $2
            -- Since the circuit last closed: what failed during an incident is the incident's alert.
            AND d.finished_at > coalesce(s.circuit_changed_at, '-infinity')
            AND EXISTS (SELECT 1 FROM webhook_attempts a
                         WHERE a.delivery_id = d.id AND a.attempt = d.attempts AND a.outcome = 'failed')) f
      WHERE s.status = 'active' AND s.circuit_state = 'closed' AND f.failed > 0
        AND NOT EXISTS (SELECT 1 FROM alerts a
                         WHERE a.organization_id = s.organization_id AND a.subject_id = s.id::text
                           AND a.kind = 'failing' AND a.created_at > now() - interval '1 day')`,
    [from, until],
  );
  return rows;
}

export interface OpenIncident extends SubscriptionFacts {
  /** The incident's circuit.opened event: its first opening. */
  event_id: string;
  opened_at: Date;
}

/**
 * Incidents open for `alertAfterSeconds` or more (measured from the
 * incident's circuit.opened, its first opening; openings after failed probes
 * write no event) on active subscriptions, not yet alerted. Open circuits
 * are few, read through their partial index.
 */
export async function findLongIncidents(db: Queryable, alertAfterSeconds: number): Promise<OpenIncident[]> {
  const { rows } = await db.query<OpenIncident>(
    `SELECT ${SUBSCRIPTION_FACTS}, o.id AS event_id, o.occurred_at AS opened_at
       FROM webhook_subscriptions s
       JOIN oauth_clients c ON c.client_id = s.client_id
       CROSS JOIN LATERAL (
         SELECT e.id, e.occurred_at FROM audit_events e
          WHERE e.organization_id = s.organization_id AND e.subject_id = s.id::text AND e.type = 'circuit.opened'
          ORDER BY e.occurred_at DESC, e.id DESC LIMIT 1) o
      WHERE s.circuit_state = 'open' AND s.status = 'active'
        AND o.occurred_at <= now() - make_interval(secs => $1)
        AND NOT EXISTS (SELECT 1 FROM alerts a
                         WHERE a.organization_id = s.organization_id AND a.dedupe_key = 'incident:' || o.id)`,
    [alertAfterSeconds],
  );
  return rows;
}

/** An audit event an alert may follow from. */
export interface AlertingEvent {
  id: string;
  organization_id: string;
  type: 'circuit.closed' | 'subscription.disabled' | 'grant.revoked';
  subject_id: string;
  reason: string;
  occurred_at: Date;
  details: Record<string, unknown>;
}

/**
 * The events between `from` (less a minute: an event's time is its
 * transaction's, which may commit after a look began) and `until` that end
 * an incident, or disable a subscription for delivery_failures, or revoke a
 * connection for refresh_reuse or code_replay. Nothing a person did on
 * purpose is among them (a disconnect, an unsubscribe, a deletion, a 410).
 */
export async function findAlertingEvents(db: Queryable, from: Date, until: Date): Promise<AlertingEvent[]> {
  const { rows } = await db.query<AlertingEvent>(
    `SELECT e.id, e.organization_id, e.type, e.subject_id, e.reason, e.occurred_at, e.details
       FROM audit_events e
      WHERE e.occurred_at > $1::timestamptz - interval '1 minute' AND e.occurred_at <= $2
        AND (e.type = 'circuit.closed'
             OR (e.type = 'subscription.disabled' AND e.reason = 'delivery_failures')
             OR (e.type = 'grant.revoked' AND e.reason IN ('refresh_reuse', 'code_replay')))
      ORDER BY e.occurred_at, e.id`,
    [from, until],
  );
  return rows;
}

export async function subscriptionFacts(db: Queryable, subscriptionId: string): Promise<SubscriptionFacts | undefined> {
  const { rows } = await db.query<SubscriptionFacts>(
    `SELECT ${SUBSCRIPTION_FACTS}
       FROM webhook_subscriptions s JOIN oauth_clients c ON c.client_id = s.client_id
      WHERE s.id = $1`,
    [subscriptionId],
  );
  return rows[0];
}

/** The app a revocation was about, and how many of its subscriptions in the organization it stopped. */
export async function revokedClientFacts(
  db: Queryable,
  organizationId: string,
  clientId: string,
): Promise<{ app: string; subscriptions: number } | undefined> {
  const { rows } = await db.query<{ app: string; subscriptions: number }>(
    `SELECT c.name AS app,
            (SELECT count(*)::int FROM webhook_subscriptions s
              WHERE s.organization_id = $1 AND s.client_id = c.client_id
                AND s.status = 'disabled' AND s.disabled_reason = 'grant_revoked') AS subscriptions
       FROM oauth_clients c WHERE c.client_id = $2`,
    [organizationId, clientId],
  );
  return rows[0];
}

/** When the incident an alert was written for began (its first opening), or undefined when none was written. */
export async function incidentAlertSince(db: Queryable, organizationId: string, incidentEventId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ since: string }>(
    `SELECT details->>'since' AS since FROM alerts WHERE organization_id = $1 AND dedupe_key = 'incident:' || $2::text`,
    [organizationId, incidentEventId],
  );
  return rows[0]?.since;
}

/** An incident's alert e-mails still waiting when it ended: nothing to tell any more. */
export async function cancelWaitingIncidentEmails(db: Queryable, organizationId: string, incidentEventId: string): Promise<void> {
  await db.query(
    `UPDATE alert_emails e SET status = 'cancelled', finished_at = now(), claim_token = NULL
       FROM alerts a
      WHERE a.organization_id = $1 AND a.dedupe_key = 'incident:' || $2::text
        AND e.alert_id = a.id AND e.status = 'waiting' AND e.claim_token IS NULL`,
    [organizationId, incidentEventId],
  );
}
