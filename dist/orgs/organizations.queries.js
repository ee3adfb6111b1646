const COLUMNS = 'id, name, active, created_at';
export async function insertOrganization(db, name) {
    const { rows } = await db.query(`INSERT INTO organizations (name) VALUES ($1) RETURNING ${COLUMNS}`, [name]);
    return rows[0];
}
export async function listOrganizations(db) {
    const { rows } = await db.query(`SELECT ${COLUMNS} FROM organizations ORDER BY created_at, id`);
    return rows;
}
export async function findOrganization(db, id) {
    const { rows } = await db.query(`SELECT ${COLUMNS} FROM organizations WHERE id = $1`, [id]);
    return rows[0];
}
export async function setOrganizationActive(db, id, active) {
    const { rows } = await db.query(`UPDATE organizations SET active = $2 WHERE id = $1 RETURNING ${COLUMNS}`, [id, active]);
    return rows[0];
}
//# sourceMappingURL=organizations.queries.js.map