const COLUMNS = 'id, organization_id, agent_id, status, created_at, completed_at, duration_seconds, summary';
export async function insertCall(db, input) {
    const { rows } = await db.query(`INSERT INTO calls (organization_id, agent_id) VALUES (app_current_org(), $1) RETURNING ${COLUMNS}`, [input.agentId]);
    return rows[0];
}
/** A call that finished before it was recorded: created completed, in one statement. */
export async function insertCompletedCall(db, input) {
    const { rows } = await db.query(`INSERT INTO calls (organization_id, agent_id, status, completed_at, summary, duration_seconds)
     VALUES (app_current_org(), $1, 'completed', now(), $2, $3) RETURNING ${COLUMNS}`, [input.agentId, input.summary, input.durationSeconds]);
    return rows[0];
}
/**
 * Completes an in-progress call. The status condition makes completion happen
 * once: of two concurrent requests one updates the row, the other gets nothing.
 */
export async function completeInProgressCall(db, input) {
    const { rows } = await db.query(`UPDATE calls SET status = 'completed', completed_at = now(), summary = $2, duration_seconds = $3
      WHERE id = $1 AND status = 'in_progress'
     RETURNING ${COLUMNS}`, [input.id, input.summary, input.durationSeconds]);
    return rows[0];
}
export async function findCall(db, id) {
    const { rows } = await db.query(`SELECT ${COLUMNS} FROM calls WHERE id = $1`, [id]);
    return rows[0];
}
/**
 * Newest first. `afterId` is the last call of the previous page (keyset
 * pagination); its position is read in SQL so microseconds are not lost.
 */
export async function listCalls(db, input) {
    const { rows } = await db.query(`SELECT ${COLUMNS} FROM calls
      WHERE ($1::text IS NULL OR status = $1)
        AND ($2::uuid IS NULL OR (created_at, id) < (SELECT c.created_at, c.id FROM calls c WHERE c.id = $2))
      ORDER BY created_at DESC, id DESC
      LIMIT $3`, [input.status ?? null, input.afterId ?? null, input.limit]);
    return rows;
}
export async function listRecentCompletedCalls(db, limit) {
    const { rows } = await db.query(`SELECT ${COLUMNS} FROM calls WHERE status = 'completed' ORDER BY created_at DESC, id DESC LIMIT $1`, [limit]);
    return rows;
}
/**
 * GET /calls/recent in one statement: the platform's credentials are checked
 * and the calls read as switchboard_app in the token's organization (see the
 * migration). Runs on the pool, outside any transaction.
 */
export async function readRecentCallsAsPlatform(db, input) {
    const { rows } = await db.query({
        name: 'calls_recent_as_platform',
        text: 'SELECT * FROM app_platform_recent_calls($1, $2, $3, $4, $5)',
        values: [input.tokenHash, input.clientId, input.secretHash, input.scope, input.limit],
    });
    return rows[0];
}
//# sourceMappingURL=calls.queries.js.map