// The audit log keeps AUDIT_RETENTION (default 400 days): the maintenance task
// removes older events, a batch a statement, so no one statement holds many
// rows' locks or a long transaction.
import type { Pool } from '../db/pool.ts';
import { deleteAuditEventsBefore } from './audit-events.queries.ts';

const BATCH = 5000;

export async function purgeAuditLog(pool: Pool, retentionMs: number, now = new Date(), batch = BATCH): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionMs);
  let total = 0;
  let removed: number;
  do {
    removed = await deleteAuditEventsBefore(pool, cutoff, batch);
    total += removed;
  } while (removed === batch);
  return total;
}
