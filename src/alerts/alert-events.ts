// alert.sent: one audit event per alert once its e-mails have all ended,
// written in the transaction that marks the alert finished
// (src/alerts/sender.ts), with the recipients' count and the incident. An
// alert none of whose e-mails went out (each given up or cancelled) records
// nothing: nothing was sent.
import { WORKER } from '../audit/audit-actor.ts';
import { writeAuditEvent } from '../audit/audit-events.queries.ts';
import type { Queryable } from '../db/pool.ts';
import type { FinishedAlert } from './outbox.queries.ts';

export async function recordAlertsSent(db: Queryable, alerts: FinishedAlert[]): Promise<void> {
  for (const alert of alerts) {
    if (alert.recipients === 0) continue;
    const { details } = alert;
    await writeAuditEvent(db, {
      organizationId: alert.organization_id,
      type: 'alert.sent',
      actor: WORKER,
      subjectType: alert.subject_type,
      subjectId: alert.subject_id,
      details: {
        alert: alert.kind,
        recipients: alert.recipients,
        // The incident: the circuit.opened (or disable, revocation) event the alert follows from, and since when.
        incident: details.event_id ?? null,
        since: details.since,
        ...(details.url ? { hook_url: details.url } : {}),
        client_id: details.client_id,
        client_name: details.app,
      },
    });
  }
}
