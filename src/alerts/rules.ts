// The alert rules: when owners and admins get an e-mail (docs/interface.md,
// "Alert e-mails to owners and admins"). Each rule reads what is already written, and writes its alerts
// into the outbox (src/alerts/outbox.queries.ts) under a key that makes a
// second worker's finding of the same alert do nothing:
//
// - `incident:<circuit.opened id>`: an incident (circuit open, first opening
//   ALERT_AFTER ago or more) on an active subscription;
// - `recovered:<circuit.opened id>`: its circuit.closed with reason
//   `recovered`, to those who were sent the incident's e-mail;
// - `disabled:<event id>`: subscription.disabled for delivery_failures;
// - `revoked:<event id>`: grant.revoked for refresh_reuse or code_replay;
// - `failing:<subscription>:<time>`: deliveries failed for good while the
//   circuit stayed closed, at most one a subscription in 24 hours.
//
// Nothing a person did on purpose (a disconnect, an unsubscribe, a deletion,
// a 410, an enable that resets the circuit) is among them.
import type { Config } from '../config/config.ts';
import type { Pool } from '../db/pool.ts';
import { withTransaction } from '../db/transaction.ts';
import { periodic, type PeriodicJob, type Task, type TaskHost } from '../tasks/task.ts';
import type { AlertDetails } from './alert.ts';
import { enqueueAlert } from './outbox.queries.ts';
import {
  cancelWaitingIncidentEmails,
  findAlertingEvents,
  findFailingSubscriptions,
  findLongIncidents,
  incidentAlertSince,
  lockScan,
  revokedClientFacts,
  saveScan,
  subscriptionFacts,
  type AlertingEvent,
  type SubscriptionFacts,
} from './rules.queries.ts';

function facts(s: SubscriptionFacts, since: Date): AlertDetails {
  return { app: s.app, client_id: s.client_id, url: s.url, since: since.toISOString(), waiting: s.waiting };
}

/** Incidents that have lasted ALERT_AFTER. Returns how many alerts it wrote. */
export async function alertLongIncidents(pool: Pool, alertAfterMs: number): Promise<number> {
  return withTransaction(pool, async (db) => {
    let written = 0;
    for (const incident of await findLongIncidents(db, alertAfterMs / 1000)) {
      written += await enqueueAlert(db, {
        organizationId: incident.organization_id,
        kind: 'incident',
        subjectType: 'subscription',
        subjectId: incident.subscription_id,
        dedupeKey: `incident:${incident.event_id}`,
        details: { ...facts(incident, incident.opened_at), event_id: incident.event_id },
      });
    }
    return written;
  });
}

async function alertForEvent(db: Parameters<Parameters<typeof withTransaction>[1]>[0], event: AlertingEvent): Promise<number> {
  const org = event.organization_id;
  if (event.type === 'circuit.closed') {
    const incident = typeof event.details.incident === 'string' ? event.details.incident : undefined;
    if (!incident) return 0;
    // Whoever was told of the incident hears of its end; an e-mail of it still waiting is not sent at all.
    let written = 0;
    const since = event.reason === 'recovered' ? await incidentAlertSince(db, org, incident) : undefined;
    const s = since === undefined ? undefined : await subscriptionFacts(db, event.subject_id);
    if (s && since) {
      written = await enqueueAlert(db, {
        organizationId: org,
        kind: 'recovered',
        subjectType: 'subscription',
        subjectId: event.subject_id,
        dedupeKey: `recovered:${incident}`,
        details: { ...facts(s, new Date(since)), ended_at: event.occurred_at.toISOString(), event_id: incident },
        toRecipientsOf: `incident:${incident}`,
      });
    }
    await cancelWaitingIncidentEmails(db, org, incident);
    return written;
  }
  if (event.type === 'subscription.disabled') {
    const s = await subscriptionFacts(db, event.subject_id);
    if (!s) return 0;
    return enqueueAlert(db, {
      organizationId: org,
      kind: 'disabled',
      subjectType: 'subscription',
      subjectId: event.subject_id,
      dedupeKey: `disabled:${event.id}`,
      details: { ...facts(s, event.occurred_at), event_id: event.id, reason: event.reason },
    });
  }
  const client = await revokedClientFacts(db, org, event.subject_id);
  if (!client) return 0;
  return enqueueAlert(db, {
    organizationId: org,
    kind: 'revoked',
    subjectType: 'client',
    subjectId: event.subject_id,
    dedupeKey: `revoked:${event.id}`,
    details: {
      app: client.app,
      client_id: event.subject_id,
      since: event.occurred_at.toISOString(),
      event_id: event.id,
      reason: event.reason,
      subscriptions: client.subscriptions,
    },
  });
}

/** The audit events since the last look that call for an alert. Returns how many alerts it wrote (undefined: another worker is looking). */
export async function alertFromEvents(pool: Pool): Promise<number | undefined> {
  return withTransaction(pool, async (db) => {
    const scan = await lockScan(db, 'events');
    if (!scan) return undefined;
    let written = 0;
    for (const event of await findAlertingEvents(db, scan.from, scan.until)) written += await alertForEvent(db, event);
    await saveScan(db, 'events', scan.until);
    return written;
  });
}

/** Deliveries failed for good while the circuit stayed closed (a receiver answering 404). */
export async function alertFailingSubscriptions(pool: Pool): Promise<number | undefined> {
  return withTransaction(pool, async (db) => {
    const scan = await lockScan(db, 'failing');
    if (!scan) return undefined;
    let written = 0;
    for (const s of await findFailingSubscriptions(db, scan.from, scan.until)) {
      written += await enqueueAlert(db, {
        organizationId: s.organization_id,
        kind: 'failing',
        subjectType: 'subscription',
        subjectId: s.subscription_id,
        dedupeKey: `failing:${s.subscription_id}:${scan.until.toISOString()}`,
        details: { ...facts(s, s.first_failed_at), failed: s.failed },
      });
    }
    await saveScan(db, 'failing', scan.until);
    return written;
  });
}

export interface AlertRulesOptions {
  pool: Pool;
  config: Config;
  /** Called when a look wrote alerts: the sender may look at once. */
  onAlerts?: () => void;
}

/**
 * The rules as a task: applied every ALERT_RULES_INTERVAL; the 404 rule, which
 * reads every active subscription's failed deliveries, at the first look and
 * then once ALERT_FAILING_RULE_INTERVAL has passed.
 */
export function alertRulesTask(host: TaskHost, options: AlertRulesOptions): Task {
  const { pool, config } = options;
  let failingRuleDue = 0;
  const job: PeriodicJob = {
    name: 'alert-rules',
    everyMs: config.alertRulesIntervalMs,
    async run(tick) {
      const rules: [string, () => Promise<number | undefined>][] = [
        ['incidents', () => alertLongIncidents(pool, config.alertAfterMs)],
        ['events', () => alertFromEvents(pool)],
      ];
      if (Date.now() >= failingRuleDue) {
        failingRuleDue = Date.now() + config.alertFailingRuleIntervalMs;
        rules.push(['failing', () => alertFailingSubscriptions(pool)]);
      }
      let written = 0;
      // One rule failing leaves the others to run: each reads and writes on its own.
      for (const [rule, apply] of rules) {
        if (tick.stopping) return;
        written += (await apply().catch((error: unknown) => tick.failed(error, { rule }))) ?? 0;
      }
      if (written > 0) {
        host.log.info({ emails: written }, 'alerts written');
        options.onAlerts?.();
      }
    },
  };
  return periodic(host, job);
}
