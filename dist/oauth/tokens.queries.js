export async function insertAccessToken(db, token) {
    await db.query('INSERT INTO oauth_access_tokens (token_hash, grant_id, scopes, expires_at) VALUES ($1, $2, $3, $4)', [token.tokenHash, token.grantId, token.scopes, token.expiresAt]);
}
export async function insertRefreshToken(db, token) {
    await db.query('INSERT INTO oauth_refresh_tokens (token_hash, grant_id, scopes, expires_at) VALUES ($1, $2, $3, $4)', [token.tokenHash, token.grantId, token.scopes, token.expiresAt]);
}
/**
 * The hot path of the platform guard and of /oauth/userinfo: one query on the
 * unique token_hash index, joined to primary keys only. It answers only for a
 * token that is unexpired and unrevoked, whose grant is unrevoked, whose user,
 * organization and membership are active, so revocation and deactivation take
 * effect on the very next request in every process.
 */
export async function findActiveAccessToken(db, tokenHash) {
    const { rows } = await db.query({
        name: 'oauth_find_active_access_token',
        text: `SELECT t.grant_id, t.scopes, t.expires_at, s.user_id, s.email, s.user_name,
                  s.organization_id, s.organization_name, s.client_id, s.client_secret_hash
             FROM oauth_access_tokens t
             JOIN oauth_grant_status s ON s.grant_id = t.grant_id
            WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND t.expires_at > now()
              AND NOT s.grant_revoked AND s.principal_active`,
        values: [tokenHash],
    });
    return rows[0];
}
/** The refresh token with its grant, locked so concurrent refreshes of one token serialise. */
export async function lockRefreshToken(db, tokenHash) {
    const { rows } = await db.query(`SELECT r.id, r.grant_id, s.client_id, r.scopes,
            r.expires_at <= now() AS expired, r.revoked_at IS NOT NULL AS revoked,
            extract(epoch FROM now() - r.rotated_at)::float8 AS rotated_seconds_ago,
            s.grant_revoked, s.principal_active
       FROM oauth_refresh_tokens r
       JOIN oauth_grant_status s ON s.grant_id = r.grant_id
      WHERE r.token_hash = $1
      FOR UPDATE OF r`, [tokenHash]);
    return rows[0];
}
/** Marks a refresh token as exchanged; the first rotation time is kept (the grace period counts from it). */
export async function markRefreshTokenRotated(db, id) {
    await db.query('UPDATE oauth_refresh_tokens SET rotated_at = coalesce(rotated_at, now()) WHERE id = $1', [id]);
}
/** RFC 7009: find either kind of token by hash, to check its client before revoking. */
export async function findTokenOwner(db, tokenHash) {
    const { rows } = await db.query(`SELECT 'access' AS kind, t.id, t.grant_id, c.client_id
       FROM oauth_access_tokens t JOIN oauth_grants g ON g.id = t.grant_id JOIN oauth_clients c ON c.id = g.client_id
      WHERE t.token_hash = $1
     UNION ALL
     SELECT 'refresh' AS kind, r.id, r.grant_id, c.client_id
       FROM oauth_refresh_tokens r JOIN oauth_grants g ON g.id = r.grant_id JOIN oauth_clients c ON c.id = g.client_id
      WHERE r.token_hash = $1`, [tokenHash]);
    return rows;
}
export async function revokeAccessToken(db, id) {
    await db.query('UPDATE oauth_access_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1', [id]);
}
/** Housekeeping: rows that can no longer authenticate anything. */
export async function deleteExpiredAccessTokens(db, olderThan) {
    const { rowCount } = await db.query('DELETE FROM oauth_access_tokens WHERE expires_at < $1', [olderThan]);
    return rowCount ?? 0;
}
export async function deleteExpiredRefreshTokens(db, olderThan) {
    const { rowCount } = await db.query('DELETE FROM oauth_refresh_tokens WHERE expires_at < $1', [olderThan]);
    return rowCount ?? 0;
}
//# sourceMappingURL=tokens.queries.js.map