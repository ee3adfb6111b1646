// The delivery queue's depth, for /metrics (src/metrics/metrics.plugin.ts).
import type { Queryable } from '../db/pool.ts';

/** Unfinished deliveries: waiting for their next attempt, and leased to a worker right now (for /metrics). */
export async function countQueuedDeliveries(db: Queryable): Promise<{ pending: number; in_flight: number }> {
  const { rows } = await db.query<{ pending: number; in_flight: number }>(
    `SELECT q.pending - q.in_flight AS pending, q.in_flight
       FROM (SELECT (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending')::int AS pending,
                    (SELECT count(*) FROM webhook_delivery_leases)::int AS in_flight) q`,
  );
  return rows[0]!;
}
