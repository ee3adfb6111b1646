/** The subscription `s` may be delivered to: its grant stands for an active principal. */
const LIVE_GRANT = `EXISTS (SELECT 1 FROM oauth_grant_status g
                     WHERE g.grant_id = s.grant_id AND NOT g.grant_revoked AND g.principal_active)`;
export async function lockClaimableSubscriptions(db, input) {
    const { rows } = await db.query(`WITH due AS (
       SELECT d.subscription_id, min(d.next_attempt_at) AS due_at
         FROM webhook_deliveries d
        WHERE d.status = 'pending' AND d.lease_token IS NULL AND d.next_attempt_at <= now()
        GROUP BY d.subscription_id
       UNION ALL
       SELECT d.subscription_id, min(d.lease_expires_at)
         FROM webhook_deliveries d
        WHERE d.lease_token IS NOT NULL AND d.lease_expires_at <= now()
        GROUP BY d.subscription_id
     ),
     earliest AS (SELECT subscription_id, min(due_at) AS due_at FROM due GROUP BY subscription_id)
     SELECT s.id
       FROM webhook_subscriptions s JOIN earliest e ON e.subscription_id = s.id
      WHERE s.status = 'active' AND ${LIVE_GRANT}
        AND (SELECT count(*) FROM webhook_deliveries l
              WHERE l.subscription_id = s.id AND l.lease_token IS NOT NULL AND l.lease_expires_at > now()) < $2
      ORDER BY e.due_at
      LIMIT $1
      FOR NO KEY UPDATE OF s SKIP LOCKED`, [input.limit, input.maxInFlight]);
    return rows.map((row) => row.id);
}
export async function leaseDueDeliveries(db, input) {
    const { rows } = await db.query(`WITH slots AS (
       SELECT s.id, s.callback_url, s.secret_ciphertext,
              $2::int - (SELECT count(*) FROM webhook_deliveries l
                          WHERE l.subscription_id = s.id AND l.lease_token IS NOT NULL AND l.lease_expires_at > now())::int AS free
         FROM webhook_subscriptions s
        WHERE s.id = ANY ($1::uuid[]) AND s.status = 'active' AND ${LIVE_GRANT}
     ),
     picked AS (
       SELECT c.id, c.lease_token AS old_token, c.attempts AS old_attempts, c.last_attempt_at AS old_attempt_at,
              slots.callback_url, slots.secret_ciphertext
         FROM slots, LATERAL (
           SELECT d.id, d.lease_token, d.attempts, d.last_attempt_at, d.next_attempt_at
             FROM webhook_deliveries d
            WHERE d.subscription_id = slots.id AND d.status = 'pending' AND d.next_attempt_at <= now()
              AND (d.lease_token IS NULL OR d.lease_expires_at <= now())
            ORDER BY d.next_attempt_at, d.id
            LIMIT greatest(slots.free, 0)
              FOR UPDATE SKIP LOCKED
         ) c
        ORDER BY c.next_attempt_at
        LIMIT $3
     )
     UPDATE webhook_deliveries d
        SET attempts = d.attempts + 1, lease_token = gen_random_uuid(),
            lease_expires_at = now() + $4::int * interval '1 millisecond', last_attempt_at = now(), updated_at = now()
       FROM picked
      WHERE d.id = picked.id AND d.status = 'pending' AND (d.lease_token IS NULL OR d.lease_expires_at <= now())
     RETURNING d.id, d.organization_id, d.subscription_id, d.call_id, d.event, d.body, d.attempts AS attempt,
               d.schedule_start, d.lease_token, picked.callback_url, picked.secret_ciphertext,
               CASE WHEN picked.old_token IS NULL THEN NULL ELSE picked.old_attempts END AS lost_attempt,
               CASE WHEN picked.old_token IS NULL THEN NULL ELSE picked.old_attempt_at END AS lost_attempt_at`, [input.subscriptionIds, input.maxInFlight, input.limit, input.leaseMs]);
    return rows;
}
/**
 * When the worker should look again: the earliest scheduled attempt of an
 * active subscription, or the earliest lease to run out (a worker may have died).
 */
export async function nextDueAt(db) {
    const { rows } = await db.query(`SELECT least(
       (SELECT d.next_attempt_at FROM webhook_deliveries d
          JOIN webhook_subscriptions s ON s.id = d.subscription_id AND s.status = 'active'
         WHERE d.status = 'pending' AND d.lease_token IS NULL
         ORDER BY d.next_attempt_at LIMIT 1),
       (SELECT min(lease_expires_at) FROM webhook_deliveries WHERE lease_token IS NOT NULL)
     ) AS at`);
    return rows[0]?.at ?? null;
}
//# sourceMappingURL=claim.queries.js.map