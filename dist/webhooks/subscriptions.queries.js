const COLUMNS = `id, organization_id, client_id, event, callback_url, secret_ciphertext IS NOT NULL AS has_secret,
  status, failing_since, disabled_at,
  CASE WHEN status = 'disabled' THEN coalesce(disabled_reason, 'delivery_failures') END AS disabled_reason, created_at, updated_at`;
/**
 * Creates the subscription, or returns the existing one for the same
 * organization, client, event and URL (`inserted` false). Subscribing again
 * replaces the secret when one is given and re-activates a disabled hook: the
 * platform is asking for deliveries, under the grant it asks with now.
 */
export async function upsertSubscription(db, input) {
    const { rows } = await db.query(`INSERT INTO webhook_subscriptions (organization_id, client_id, grant_id, event, callback_url, secret_ciphertext)
     VALUES (app_current_org(), $1, $2, $3, $4, $5)
     ON CONFLICT (organization_id, client_id, event, md5(callback_url)) DO UPDATE
        SET secret_ciphertext = COALESCE(EXCLUDED.secret_ciphertext, webhook_subscriptions.secret_ciphertext),
            grant_id = EXCLUDED.grant_id,
            status = 'active', disabled_at = NULL, disabled_reason = NULL, failing_since = NULL, updated_at = now()
     RETURNING ${COLUMNS}, (xmax = 0) AS inserted`, [input.clientId, input.grantId, input.event, input.callbackUrl, input.secretCiphertext]);
    return rows[0];
}
/** Removes the client's subscriptions with exactly this URL (any event); returns how many. */
export async function deleteSubscriptionsByUrl(db, input) {
    const { rowCount } = await db.query(`DELETE FROM webhook_subscriptions
      WHERE client_id = $1 AND md5(callback_url) = md5($2) AND callback_url = $2`, [input.clientId, input.callbackUrl]);
    return rowCount ?? 0;
}
export async function listSubscriptions(db, clientId) {
    const { rows } = await db.query(`SELECT ${COLUMNS} FROM webhook_subscriptions WHERE ($1::text IS NULL OR client_id = $1) ORDER BY created_at, id`, [clientId ?? null]);
    return rows;
}
export async function findSubscription(db, input) {
    const { rows } = await db.query(`SELECT ${COLUMNS} FROM webhook_subscriptions WHERE id = $1 AND ($2::text IS NULL OR client_id = $2)`, [input.id, input.clientId ?? null]);
    return rows[0];
}
export async function deleteSubscription(db, input) {
    const { rowCount } = await db.query('DELETE FROM webhook_subscriptions WHERE id = $1 AND ($2::text IS NULL OR client_id = $2)', [input.id, input.clientId ?? null]);
    return (rowCount ?? 0) > 0;
}
/**
 * Re-enables a disabled subscription (a no-op on an active one); its paused
 * deliveries resume. Only while its grant still stands: undefined when the
 * subscription is not visible or its grant has ended (findSubscription tells which).
 */
export async function enableSubscription(db, input) {
    const { rows } = await db.query(`UPDATE webhook_subscriptions
        SET status = 'active', disabled_at = NULL, disabled_reason = NULL,
            failing_since = CASE WHEN status = 'disabled' THEN NULL ELSE failing_since END,
            updated_at = CASE WHEN status = 'disabled' THEN now() ELSE updated_at END
      WHERE id = $1 AND ($2::text IS NULL OR client_id = $2) AND app_grant_is_live(grant_id)
     RETURNING ${COLUMNS}`, [input.id, input.clientId ?? null]);
    return rows[0];
}
//# sourceMappingURL=subscriptions.queries.js.map