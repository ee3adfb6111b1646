// The audit log keeps AUDIT_RETENTION (default 400 days): the maintenance task
// removes older events, a batch a statement, so no one statement holds many
// rows' locks or a long transaction.
import { DELETE_BATCH, deleteInBatches } from '../db/delete-in-batches.ts';
import type { Pool } from '../db/pool.ts';
import { HOURLY_MS, type PeriodicJob } from '../tasks/task.ts';
import { deleteAuditEventsBefore } from './audit-events.queries.ts';

export function purgeAuditLog(pool: Pool, retentionMs: number, now = new Date(), batch = DELETE_BATCH): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionMs);
  return deleteInBatches((limit) => deleteAuditEventsBefore(pool, cutoff, limit), batch);
}

export function auditHousekeeping({ pool, retentionMs }: { pool: Pool; retentionMs: number }): PeriodicJob[] {
  return [{ name: 'audit-log-retention', everyMs: HOURLY_MS, run: () => purgeAuditLog(pool, retentionMs) }];
}
