/** Runs inside withOrg: the row-level policy supplies and checks the organization. */
export async function insertAgent(db, name) {
    const { rows } = await db.query(`INSERT INTO agents (organization_id, name) VALUES (app_current_org(), $1)
     RETURNING id, organization_id, name, created_at`, [name]);
    return rows[0];
}
/** The organization's agents by name (inside withOrg). */
export async function listAgents(db) {
    const { rows } = await db.query('SELECT id, organization_id, name, created_at FROM agents ORDER BY name, id');
    return rows;
}
//# sourceMappingURL=agents.queries.js.map