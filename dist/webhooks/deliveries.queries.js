/** The NOTIFY channel that wakes delivery workers. */
export const DELIVERIES_CHANNEL = 'switchboard_webhook_deliveries';
const DELIVERY_COLUMNS = `d.id, d.organization_id, d.subscription_id, d.call_id, d.event, d.status, d.attempts,
  d.next_attempt_at, (d.lease_token IS NOT NULL AND d.lease_expires_at > now()) AS in_flight, d.created_at, d.finished_at`;
/**
 * One delivery per active call.completed subscription of the current
 * organization whose grant still stands (a revocation committing beside this
 * transaction is caught again by the claim). The unique (subscription, call)
 * key makes it exactly once.
 */
export async function insertCallCompletedDeliveries(db, input) {
    const { rowCount } = await db.query(`INSERT INTO webhook_deliveries (organization_id, subscription_id, call_id, event, body)
     SELECT s.organization_id, s.id, $1, s.event, $2
       FROM webhook_subscriptions s
      WHERE s.organization_id = app_current_org() AND s.event = 'call.completed' AND s.status = 'active'
        AND app_grant_is_live(s.grant_id)
     ON CONFLICT ON CONSTRAINT webhook_deliveries_subscription_call_key DO NOTHING`, [input.callId, input.body]);
    return rowCount ?? 0;
}
/** Delivered to listeners when the surrounding transaction commits (never before). */
export async function notifyDeliveriesDue(db) {
    await db.query('SELECT pg_notify($1, $2)', [DELIVERIES_CHANNEL, '']);
}
export async function findDelivery(db, id) {
    const { rows } = await db.query(`SELECT ${DELIVERY_COLUMNS}, s.client_id, s.status AS subscription_status
       FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
      WHERE d.id = $1`, [id]);
    return rows[0];
}
/**
 * Sends a delivery again now, with a fresh retry schedule; its id (and so
 * X-Delivery-Id) stays. Refused (undefined) while an attempt holds a live lease.
 */
export async function requeueDelivery(db, id) {
    const { rows } = await db.query(`UPDATE webhook_deliveries d
        SET status = 'pending', next_attempt_at = now(), schedule_start = d.attempts, finished_at = NULL, updated_at = now()
      WHERE d.id = $1 AND (d.lease_token IS NULL OR d.lease_expires_at <= now())
     RETURNING ${DELIVERY_COLUMNS}`, [id]);
    return rows[0];
}
/** A subscription's attempts, newest first; `afterId` is the last attempt of the previous page. */
export async function listAttempts(db, input) {
    const { rows } = await db.query(`SELECT a.id, a.delivery_id, a.subscription_id, d.call_id, a.attempt, a.attempted_at, a.status_code, a.latency_ms,
            a.error, a.error_message, a.response_body, a.outcome, d.status AS delivery_status
       FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
      WHERE a.subscription_id = $1
        AND ($2::uuid IS NULL OR (a.attempted_at, a.id) < (SELECT p.attempted_at, p.id FROM webhook_attempts p WHERE p.id = $2))
      ORDER BY a.attempted_at DESC, a.id DESC
      LIMIT $3`, [input.subscriptionId, input.afterId ?? null, input.limit]);
    return rows;
}
export async function attemptExists(db, input) {
    const { rowCount } = await db.query('SELECT 1 FROM webhook_attempts WHERE id = $1 AND subscription_id = $2', [input.id, input.subscriptionId]);
    return (rowCount ?? 0) > 0;
}
/** Unfinished deliveries: waiting for their next attempt, and leased to a worker right now (for /metrics). */
export async function countQueuedDeliveries(db) {
    const { rows } = await db.query(`SELECT count(*) FILTER (WHERE lease_token IS NULL)::int AS pending,
            count(*) FILTER (WHERE lease_token IS NOT NULL)::int AS in_flight
       FROM webhook_deliveries WHERE status = 'pending'`);
    return rows[0];
}
//# sourceMappingURL=deliveries.queries.js.map