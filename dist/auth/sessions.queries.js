export async function insertSession(db, session) {
    const { rows } = await db.query(`INSERT INTO user_sessions (token_hash, user_id, organization_id, expires_at)
     VALUES ($1, $2, $3, $4) RETURNING id, expires_at`, [session.tokenHash, session.userId, session.organizationId, session.expiresAt]);
    return rows[0];
}
/**
 * The one query behind every x-user-token request: the session exists and is
 * unexpired, and its user, organization and membership are all still active.
 * Deactivation therefore takes effect on the very next request.
 */
export async function findActiveSession(db, tokenHash) {
    const { rows } = await db.query(`SELECT s.id AS session_id, s.expires_at, u.id AS user_id, u.email, u.name AS user_name,
            o.id AS organization_id, o.name AS organization_name, m.role
       FROM user_sessions s
       JOIN users u ON u.id = s.user_id AND u.active
       JOIN organizations o ON o.id = s.organization_id AND o.active
       JOIN memberships m ON m.user_id = u.id AND m.organization_id = o.id
      WHERE s.token_hash = $1 AND s.expires_at > now()`, [tokenHash]);
    return rows[0];
}
export async function updateSessionOrganization(db, sessionId, organizationId) {
    await db.query('UPDATE user_sessions SET organization_id = $2 WHERE id = $1', [sessionId, organizationId]);
}
export async function deleteSession(db, sessionId) {
    await db.query('DELETE FROM user_sessions WHERE id = $1', [sessionId]);
}
export async function deleteExpiredSessions(db) {
    const { rowCount } = await db.query('DELETE FROM user_sessions WHERE expires_at <= now()');
    return rowCount ?? 0;
}
//# sourceMappingURL=sessions.queries.js.map