// Which failed deliveries may be sent again, and recover's requeue. One
// rule for recover, redeliver (deliveries.queries.ts) and the delivery-health
// counts (delivery-health.queries.ts): a delivery dropped because the app's
// access ended is sent again by none of them.
import type { Queryable } from '../db/pool.ts';

/**
 * A delivery recover may send again: failed for good after its retries, that
 * is, its latest attempt ended 'failed'. A delivery dropped because its
 * subscription's grant ended (webhooks_stop_for_grants: failed with no such attempt) is
 * not: the app whose access ended must not receive it later, even once it
 * connects again (redeliver applies the same rule, REDELIVERABLE). `d` is the
 * webhook_deliveries row.
 */
export const RECOVERABLE = `d.status = 'failed' AND (
  SELECT a.outcome FROM webhook_attempts a WHERE a.delivery_id = d.id AND a.attempt = d.attempts) = 'failed'`;
// (A scalar subquery, not EXISTS: the planner may not turn it into a join that
// scans the attempts; it is one lookup in webhook_attempts_delivery_attempt_key
// per candidate delivery.)

/**
 * A delivery redeliver may send again: one that did not fail (pending, or
 * succeeded), or a failed one that recover may send. So the two share one
 * rule, RECOVERABLE: a delivery dropped when the app's access ended is sent by
 * neither. NULL (a failed delivery without attempts) counts as false.
 */
export const REDELIVERABLE = `(d.status <> 'failed' OR (${RECOVERABLE}))`;

/**
 * Recover: a subscription's recoverable deliveries created since `since`,
 * oldest first, at most `limit`, sent again now with a fresh retry schedule
 * (the same requeue as requeueDelivery, so the worker's ordinary claim picks
 * them up). Only rows still 'failed' are touched (re-checked on the locked
 * row): a delivery already requeued, by an earlier recover or a concurrent
 * one, is pending or in flight and is not queued a second time.
 */
export async function requeueFailedDeliveries(
  db: Queryable,
  input: { subscriptionId: string; since: Date; limit: number },
): Promise<{ requeued: number; more: boolean }> {
  const { rowCount } = await db.query(
    `WITH picked AS (
       SELECT d.id FROM webhook_deliveries d
        WHERE d.subscription_id = $1 AND d.created_at >= $2 AND ${RECOVERABLE}
        ORDER BY d.created_at, d.id
        LIMIT $3
     )
     UPDATE webhook_deliveries d
        SET status = 'pending', next_attempt_at = now(), schedule_start = d.attempts, finished_at = NULL, updated_at = now()
       FROM picked
      WHERE d.id = picked.id AND d.status = 'failed'`,
    [input.subscriptionId, input.since, input.limit],
  );
  const { rows } = await db.query<{ more: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.subscription_id = $1 AND d.created_at >= $2 AND ${RECOVERABLE}) AS more`,
    [input.subscriptionId, input.since],
  );
  return { requeued: rowCount ?? 0, more: rows[0]!.more };
}
