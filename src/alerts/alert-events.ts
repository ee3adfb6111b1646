// alert.sent: one audit event per alert once its e-mails have all ended,
// written in the transaction that marks the alert finished
// (src/alerts/sender.ts), with the recipients' count and the incident.
import type { Queryable } from '../db/pool.ts';
import type { FinishedAlert } from './outbox.queries.ts';

export async function recordAlertsSent(_db: Queryable, _alerts: FinishedAlert[]): Promise<void> {
  // Written through the audit log's writer once it exists (issue 32, item 1).
}
