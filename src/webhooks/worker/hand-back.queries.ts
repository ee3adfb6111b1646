// Graceful stop: attempts still running when a stopping worker's drain time
// is up are handed back at once instead of being left to their lease's expiry.
// The attempt may have reached the target, so it is logged the way a lost
// attempt is ('lease_expired', retrying: the next attempt is sent with the same
// delivery id), and the delivery is due now, for any other worker.
import type { DeadlineQueryConfig, Queryable } from '../../db/pool.ts';

export const HANDED_BACK_MESSAGE = 'the worker stopped before this attempt was answered; handed back to another worker';

/** Releases the leases still held (by `leaseToken`); returns the ids actually handed back. */
export async function handBackLeases(
  db: Queryable,
  claims: { id: string; leaseToken: string }[],
  /** The statement fails after this long without an answer (claim.queries.ts, deadlineMs); unset: no deadline. */
  deadlineMs?: number,
): Promise<string[]> {
  if (claims.length === 0) return [];
  const query: DeadlineQueryConfig = {
    query_timeout: deadlineMs,
    // The delivery first, then its lease (webhook_delivery_leases). A lease's attempt
    // is its delivery's attempts + 1 until a claim that took it over (after
    // it ran out) counted it: re-checked on the delivery's newest version,
    // the test fails then, and that claim's lease is left alone.
    text: `WITH released AS (
       UPDATE webhook_deliveries d
          SET next_attempt_at = now(), attempts = d.attempts + 1, updated_at = now()
         FROM unnest($1::uuid[], $2::uuid[]) AS c(id, lease_token), webhook_delivery_leases l
        WHERE d.id = c.id AND l.delivery_id = d.id AND l.token = c.lease_token AND l.attempt = d.attempts + 1
          AND d.status = 'pending'
       RETURNING d.id, d.organization_id, d.subscription_id, l.attempt, l.started_at
     ), unleased AS (
       DELETE FROM webhook_delivery_leases l WHERE l.delivery_id = ANY (ARRAY(SELECT released.id FROM released))
     ), logged AS (
       INSERT INTO webhook_attempts (organization_id, delivery_id, subscription_id, attempt, attempted_at, status_code,
                                     latency_ms, error, error_message, response_body, outcome)
       SELECT organization_id, id, subscription_id, attempt, started_at, NULL, NULL,
              'lease_expired', $3, NULL, 'retrying'
         FROM released
       ON CONFLICT ON CONSTRAINT webhook_attempts_delivery_attempt_key DO NOTHING
     )
     SELECT id FROM released`,
    values: [claims.map((c) => c.id), claims.map((c) => c.leaseToken), HANDED_BACK_MESSAGE],
  };
  const { rows } = await db.query<{ id: string }>(query);
  return rows.map((row) => row.id);
}
