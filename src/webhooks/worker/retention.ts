// The delivery log keeps 30 days: older attempts go, and so do deliveries
// that finished (succeeded or failed) more than 30 days ago. Pending
// deliveries are never removed here, however old.
import { deleteInBatches } from '../../db/delete-in-batches.ts';
import type { Pool } from '../../db/pool.ts';
import { HOURLY_MS, type PeriodicJob } from '../../tasks/task.ts';
import { deleteAttemptHoursBefore } from '../delivery-health.queries.ts';
import { deleteAttemptsBefore, deleteFinishedDeliveriesBefore } from './retention.queries.ts';

export const DELIVERY_LOG_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

export async function purgeDeliveryLog(pool: Pool, now = new Date()): Promise<{ attempts: number; deliveries: number }> {
  const cutoff = new Date(now.getTime() - DELIVERY_LOG_RETENTION_MS);
  const attempts = await deleteInBatches((limit) => deleteAttemptsBefore(pool, cutoff, limit));
  const deliveries = await deleteInBatches((limit) => deleteFinishedDeliveriesBefore(pool, cutoff, limit));
  // The delivery-health charts' stored hours go with the attempts they counted.
  await deleteAttemptHoursBefore(pool, cutoff);
  return { attempts, deliveries };
}

export function deliveryLogHousekeeping({ pool }: { pool: Pool }): PeriodicJob[] {
  return [{ name: 'webhook-log-retention', everyMs: HOURLY_MS, run: () => purgeDeliveryLog(pool) }];
}
