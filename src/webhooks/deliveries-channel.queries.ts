// The NOTIFY channel that wakes delivery workers, and what its payload says.
// The outbox (src/calls/completed-calls.queries.ts) notifies in the statement
// that writes the deliveries; a requeue, a hand-back or a re-enabled
// subscription notifies with notifyDeliveriesDue; the worker listens
// (worker/listener.ts) and reads the payload with notifiedSubscriptions.
import type { DeadlineQueryConfig, Queryable } from '../db/pool.ts';

export const DELIVERIES_CHANNEL = 'switchboard_webhook_deliveries';

/**
 * A completed call's notification names the subscriptions that got a delivery
 * (ids, comma-separated), so a worker that already holds as many attempts of
 * each of them as the per-subscription cap allows can skip a claim that could
 * take nothing (worker/claim-loop.ts). More than this many, and every other
 * sender (requeue, hand-back, re-enable), send an empty payload: "look at
 * everything". 100 ids fit well inside NOTIFY's 8000-byte payload.
 */
const MAX_NAMED_SUBSCRIPTIONS = 100;

/**
 * The payload (an aggregate, SQL) that names the subscription ids of
 * `column` over a query's rows, or names none when there are too many.
 */
export function payloadNaming(column: string): string {
  return `CASE WHEN count(DISTINCT ${column}) <= ${MAX_NAMED_SUBSCRIPTIONS}
                   THEN string_agg(DISTINCT ${column}::text, ',') ELSE '' END`;
}

/** The subscriptions a notification names, or null when it names none (look at everything). */
export function notifiedSubscriptions(payload: string | undefined): string[] | null {
  return payload ? payload.split(',') : null;
}

/** Delivered to listeners when the surrounding transaction commits (never before); names no subscription. */
export async function notifyDeliveriesDue(db: Queryable, deadlineMs?: number): Promise<void> {
  const query: DeadlineQueryConfig = { text: 'SELECT pg_notify($1, $2)', values: [DELIVERIES_CHANNEL, ''], query_timeout: deadlineMs };
  await db.query(query);
}
