export async function insertGrant(db, grant) {
    const { rows } = await db.query(`INSERT INTO oauth_grants (client_id, user_id, organization_id, scopes)
     VALUES ($1, $2, $3, $4)
     RETURNING id, client_id, user_id, organization_id, scopes, created_at, revoked_at`, [grant.clientId, grant.userId, grant.organizationId, grant.scopes]);
    return rows[0];
}
/** Revokes a grant and with it every code and token that points to it. Idempotent. */
export async function revokeGrant(db, grantId, reason) {
    await db.query(`UPDATE oauth_grants SET revoked_at = now(), revoked_reason = $2 WHERE id = $1 AND revoked_at IS NULL`, [grantId, reason]);
}
export async function insertAuthorizationCode(db, code) {
    await db.query(`INSERT INTO oauth_authorization_codes (code_hash, grant_id, redirect_uri, redirect_uri_given, code_challenge, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6)`, [code.codeHash, code.grantId, code.redirectUri, code.redirectUriGiven, code.codeChallenge, code.expiresAt]);
}
/**
 * The code with its grant, locked so two concurrent exchanges of one code
 * serialise: the second sees `used` and is treated as a replay.
 */
export async function lockAuthorizationCode(db, codeHash) {
    const { rows } = await db.query(`SELECT s.grant_id, s.client_id, s.user_id, s.organization_id, s.scopes,
            ac.redirect_uri, ac.redirect_uri_given, ac.code_challenge,
            ac.expires_at <= now() AS expired, ac.used_at IS NOT NULL AS used,
            s.grant_revoked, s.principal_active
       FROM oauth_authorization_codes ac
       JOIN oauth_grant_status s ON s.grant_id = ac.grant_id
      WHERE ac.code_hash = $1
      FOR UPDATE OF ac`, [codeHash]);
    return rows[0];
}
export async function markAuthorizationCodeUsed(db, codeHash) {
    await db.query('UPDATE oauth_authorization_codes SET used_at = now() WHERE code_hash = $1', [codeHash]);
}
export async function deleteExpiredAuthorizationCodes(db, olderThan) {
    const { rowCount } = await db.query('DELETE FROM oauth_authorization_codes WHERE expires_at < $1', [olderThan]);
    return rowCount ?? 0;
}
/** Tenant query (withOrg): the clients holding live grants in the current organization. */
export async function listConnectedApps(db) {
    const { rows } = await db.query(`SELECT c.client_id, c.name AS client_name,
            array(SELECT DISTINCT s FROM oauth_grants g2 CROSS JOIN unnest(g2.scopes) s
                   WHERE g2.client_id = c.id AND g2.revoked_at IS NULL ORDER BY 1) AS scopes,
            min(g.created_at) AS connected_at, count(*)::int AS grants
       FROM oauth_grants g JOIN oauth_clients c ON c.id = g.client_id
      WHERE g.revoked_at IS NULL
      GROUP BY c.id, c.client_id, c.name
      ORDER BY c.name, c.client_id`);
    return rows;
}
/** Tenant query (withOrg): revokes every live grant of one client in the current organization. */
export async function revokeClientGrantsInOrg(db, clientId) {
    const { rowCount } = await db.query(`UPDATE oauth_grants g SET revoked_at = now(), revoked_reason = 'user'
       FROM oauth_clients c
      WHERE c.id = g.client_id AND c.client_id = $1 AND g.revoked_at IS NULL`, [clientId]);
    return rowCount ?? 0;
}
//# sourceMappingURL=grants.queries.js.map