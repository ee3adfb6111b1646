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
    text: `WITH released AS (
       UPDATE webhook_deliveries d
          SET lease_token = NULL, lease_expires_at = NULL, next_attempt_at = now(), updated_at = now()
         FROM unnest($1::uuid[], $2::uuid[]) AS c(id, lease_token)
        WHERE d.id = c.id AND d.lease_token = c.lease_token AND d.status = 'pending'
       RETURNING d.id, d.organization_id, d.subscription_id, d.attempts, d.last_attempt_at
     ), logged AS (
       INSERT INTO webhook_attempts (organization_id, delivery_id, subscription_id, attempt, attempted_at, status_code,
                                     latency_ms, error, error_message, response_body, outcome)
       SELECT organization_id, id, subscription_id, attempts, coalesce(last_attempt_at, now()), NULL, NULL,
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
