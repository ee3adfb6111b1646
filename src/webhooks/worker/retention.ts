// The delivery log keeps 30 days: older attempts go, and so do deliveries
// that finished (succeeded or failed) more than 30 days ago. Pending
// deliveries are never removed here, however old.
import type { Pool } from '../../db/pool.ts';
import { deleteAttemptHoursBefore } from '../delivery-health.queries.ts';
import { deleteAttemptsBefore, deleteFinishedDeliveriesBefore } from './retention.queries.ts';

export const DELIVERY_LOG_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
const BATCH = 5000;

async function inBatches(removeBatch: () => Promise<number>): Promise<number> {
  let total = 0;
  let removed: number;
  do {
    removed = await removeBatch();
    total += removed;
  } while (removed === BATCH);
  return total;
}

export async function purgeDeliveryLog(pool: Pool, now = new Date()): Promise<{ attempts: number; deliveries: number }> {
  const cutoff = new Date(now.getTime() - DELIVERY_LOG_RETENTION_MS);
  const attempts = await inBatches(() => deleteAttemptsBefore(pool, cutoff, BATCH));
  const deliveries = await inBatches(() => deleteFinishedDeliveriesBefore(pool, cutoff, BATCH));
  // The delivery-health charts' stored hours go with the attempts they counted.
  await deleteAttemptHoursBefore(pool, cutoff);
  return { attempts, deliveries };
}
