// Leases given back. Graceful stop: attempts still running when a stopping
// worker's drain time is up are handed back at once instead of being left to
// their lease's expiry (handBackLeases); and a claim whose attempt was never
// sent is returned unused (returnUnsentLeases).
// A handed-back attempt may have reached the target, so it is logged the way a lost
// attempt is ('lease_expired', retrying: the next attempt is sent with the same
// delivery id), and the delivery is due now, for any other worker.
import { namedStatement, valuesOf } from '../../db/named-statement.ts';
import type { DeadlineQueryConfig, Queryable } from '../../db/pool.ts';

export const HANDED_BACK_MESSAGE = 'the worker stopped before this attempt was answered; handed back to another worker';

/**
 * Releases the leases still held (by lease token) and logs their attempts;
 * returns the ids actually handed back. In the order every writer takes a
 * subscription's rows (docs/delivery-engine.md, "Locks"): the subscriptions
 * first, FOR KEY SHARE in id order, so a deletion or a grant's stop, which
 * holds its subscriptions FOR UPDATE before their deliveries, ends before this
 * touches a delivery, or waits for it. Then the deliveries, skipping one
 * another statement is writing: an outcome being recorded for it (the same
 * attempt, finished as the drain ended) releases its lease itself, and the
 * record waits for the rows held here; waiting both ways, in whatever order
 * each statement met the rows, they deadlocked. Then each delivery before its
 * lease. A lease's attempt is its delivery's attempts + 1 until a claim that
 * took it over (after it ran out) counted it: re-checked on the delivery's
 * newest version, the test fails then, and that claim's lease is left alone.
 */
export const HAND_BACK_LEASES = namedStatement(
  'switchboard_hand_back_leases',
  { deliveryIds: 'uuid[]', leaseTokens: 'uuid[]', message: 'text' },
  `WITH subscribed AS MATERIALIZED (
     SELECT s.id FROM webhook_subscriptions s
      WHERE s.id = ANY (ARRAY(SELECT d.subscription_id FROM webhook_deliveries d WHERE d.id = ANY (@deliveryIds::uuid[])))
      ORDER BY s.id
        FOR KEY SHARE OF s
   ), held AS MATERIALIZED (
     SELECT d.id FROM webhook_deliveries d
      WHERE d.id = ANY (@deliveryIds::uuid[]) AND d.subscription_id = ANY (ARRAY(SELECT subscribed.id FROM subscribed))
      ORDER BY d.id
        FOR NO KEY UPDATE OF d SKIP LOCKED
   ), released AS (
     UPDATE webhook_deliveries d
        SET next_attempt_at = now(), attempts = d.attempts + 1, updated_at = now()
       FROM unnest(@deliveryIds::uuid[], @leaseTokens::uuid[]) AS c(id, lease_token), webhook_delivery_leases l
      WHERE d.id = c.id AND d.id = ANY (ARRAY(SELECT held.id FROM held))
        AND l.delivery_id = d.id AND l.token = c.lease_token AND l.attempt = d.attempts + 1
        AND d.status = 'pending'
     RETURNING d.id, d.organization_id, d.subscription_id, l.attempt, l.started_at
   ), unleased AS (
     DELETE FROM webhook_delivery_leases l WHERE l.delivery_id = ANY (ARRAY(SELECT released.id FROM released))
   ), logged AS (
     INSERT INTO webhook_attempts (organization_id, delivery_id, subscription_id, attempt, attempted_at, status_code,
                                   latency_ms, error, error_message, response_body, outcome)
     SELECT organization_id, id, subscription_id, attempt, started_at, NULL, NULL,
            'lease_expired', @message::text, NULL, 'retrying'
       FROM released
     ON CONFLICT ON CONSTRAINT webhook_attempts_delivery_attempt_key DO NOTHING
   )
   SELECT id FROM released`,
);

/** The leases as the statements' two parallel arrays (@deliveryIds, @leaseTokens). */
function leaseColumns(leases: { id: string; leaseToken: string }[]): { deliveryIds: string[]; leaseTokens: string[] } {
  return { deliveryIds: leases.map((lease) => lease.id), leaseTokens: leases.map((lease) => lease.leaseToken) };
}

export async function handBackLeases(
  db: Queryable,
  leases: { id: string; leaseToken: string }[],
  /** The statement fails after this long without an answer (claim.queries.ts, deadlineMs); unset: no deadline. */
  deadlineMs?: number,
): Promise<string[]> {
  if (leases.length === 0) return [];
  const query: DeadlineQueryConfig = {
    query_timeout: deadlineMs,
    text: HAND_BACK_LEASES.text,
    values: valuesOf(HAND_BACK_LEASES, {
      ...leaseColumns(leases),
      message: HANDED_BACK_MESSAGE,
    }),
  };
  const { rows } = await db.query<{ id: string }>(query);
  return rows.map((row) => row.id);
}

/**
 * Gives back leases whose attempts were never sent (the lease would have run
 * out mid-attempt): their leases go, and the attempt numbers with them, since
 * nothing used them. The delivery's row is not written: it counts only
 * attempts that ended.
 */
export const RETURN_UNSENT_LEASES = namedStatement(
  'switchboard_return_unsent_leases',
  { deliveryIds: 'uuid[]', leaseTokens: 'uuid[]' },
  `DELETE FROM webhook_delivery_leases l
    USING unnest(@deliveryIds::uuid[], @leaseTokens::uuid[]) AS c(id, lease_token)
    WHERE l.delivery_id = c.id AND l.token = c.lease_token`,
);

export async function returnUnsentLeases(
  db: Queryable,
  leases: { id: string; leaseToken: string }[],
  /** As handBackLeases' deadlineMs. */
  deadlineMs?: number,
): Promise<void> {
  const query: DeadlineQueryConfig = {
    query_timeout: deadlineMs,
    text: RETURN_UNSENT_LEASES.text,
    values: valuesOf(RETURN_UNSENT_LEASES, leaseColumns(leases)),
  };
  await db.query(query);
}
