/**
 * Releases the lease with the delivery's new state. False when the lease was
 * lost (it expired and another worker claimed the delivery, or the
 * subscription was deleted): the caller then changes nothing else.
 */
export async function releaseDelivery(db, input) {
    const { rowCount } = await db.query(`UPDATE webhook_deliveries
        SET status = $3, next_attempt_at = COALESCE($4, next_attempt_at), lease_token = NULL, lease_expires_at = NULL,
            finished_at = CASE WHEN $3 = 'pending' THEN NULL ELSE now() END, updated_at = now()
      WHERE id = $1 AND lease_token = $2`, [input.id, input.leaseToken, input.status, input.nextAttemptAt]);
    return (rowCount ?? 0) > 0;
}
/**
 * Gives back a claim whose attempt was never sent (the lease would have run
 * out mid-attempt): the attempt number is returned too, since nothing used it.
 */
export async function returnUnsentClaim(db, input) {
    await db.query(`UPDATE webhook_deliveries
        SET attempts = attempts - 1, lease_token = NULL, lease_expires_at = NULL, updated_at = now()
      WHERE id = $1 AND lease_token = $2`, [input.id, input.leaseToken]);
}
/**
 * Logs one attempt. A 'lease_expired' placeholder for the same attempt
 * number (written when another worker reclaimed it) is replaced by what the
 * slow worker actually saw. Nothing is written when the delivery is gone.
 */
export async function insertAttempt(db, record) {
    await db.query(`INSERT INTO webhook_attempts (organization_id, delivery_id, subscription_id, attempt, attempted_at, status_code,
                                   latency_ms, error, error_message, response_body, outcome)
     SELECT d.organization_id, d.id, d.subscription_id, $2, $3, $4, $5, $6, $7, $8, $9
       FROM webhook_deliveries d WHERE d.id = $1
     ON CONFLICT ON CONSTRAINT webhook_attempts_delivery_attempt_key DO UPDATE
        SET status_code = EXCLUDED.status_code, latency_ms = EXCLUDED.latency_ms, error = EXCLUDED.error,
            error_message = EXCLUDED.error_message, response_body = EXCLUDED.response_body, outcome = EXCLUDED.outcome
      WHERE webhook_attempts.error = 'lease_expired'`, [record.deliveryId, record.attempt, record.attemptedAt, record.statusCode, record.latencyMs, record.error,
        record.errorMessage, record.responseBody, record.outcome]);
}
/** A success ends the subscription's failing streak. */
export async function markSubscriptionHealthy(db, subscriptionId) {
    await db.query('UPDATE webhook_subscriptions SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL', [subscriptionId]);
}
/**
 * A failed attempt starts (or continues) the failing streak; a streak of
 * `disableAfterMs` disables the subscription. Returns true when this call disabled it.
 */
export async function markSubscriptionFailing(db, input) {
    const { rows } = await db.query(`UPDATE webhook_subscriptions s
        SET failing_since = COALESCE(s.failing_since, $2),
            status = CASE WHEN COALESCE(s.failing_since, $2) <= now() - $3::bigint * interval '1 millisecond' THEN 'disabled' ELSE s.status END,
            disabled_at = CASE WHEN s.status = 'active' AND COALESCE(s.failing_since, $2) <= now() - $3::bigint * interval '1 millisecond'
                               THEN now() ELSE s.disabled_at END,
            disabled_reason = CASE WHEN s.status = 'active' AND COALESCE(s.failing_since, $2) <= now() - $3::bigint * interval '1 millisecond'
                                   THEN 'delivery_failures' ELSE s.disabled_reason END,
            updated_at = now()
      WHERE s.id = $1
     RETURNING s.status = 'disabled' AND s.disabled_at = now() AS disabled_now`, [input.subscriptionId, input.attemptedAt, input.disableAfterMs]);
    return rows[0]?.disabled_now ?? false;
}
/** 410 Gone: the receiver asked to stop. Its deliveries and their log go with it. */
export async function deleteSubscriptionById(db, subscriptionId) {
    await db.query('DELETE FROM webhook_subscriptions WHERE id = $1', [subscriptionId]);
}
/** Retention: attempts older than the cutoff, in batches so no delete holds locks for long. */
export async function deleteAttemptsBefore(db, cutoff, batch = 5000) {
    const { rowCount } = await db.query(`DELETE FROM webhook_attempts WHERE id IN (SELECT id FROM webhook_attempts WHERE attempted_at < $1 LIMIT $2)`, [cutoff, batch]);
    return rowCount ?? 0;
}
/** Retention: finished deliveries (succeeded or failed) untouched since the cutoff. */
export async function deleteFinishedDeliveriesBefore(db, cutoff, batch = 5000) {
    const { rowCount } = await db.query(`DELETE FROM webhook_deliveries
      WHERE id IN (SELECT id FROM webhook_deliveries WHERE finished_at < $1 AND status <> 'pending' LIMIT $2)`, [cutoff, batch]);
    return rowCount ?? 0;
}
//# sourceMappingURL=record.queries.js.map