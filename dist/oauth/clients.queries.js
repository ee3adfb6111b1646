const COLUMNS = 'id, client_id, name, redirect_uris, scopes, created_at, secret_rotated_at';
export async function insertClient(db, client) {
    const { rows } = await db.query(`INSERT INTO oauth_clients (client_id, secret_hash, name, redirect_uris, scopes)
     VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`, [client.clientId, client.secretHash, client.name, client.redirectUris, client.scopes]);
    return rows[0];
}
export async function listClients(db) {
    const { rows } = await db.query(`SELECT ${COLUMNS} FROM oauth_clients ORDER BY created_at, id`);
    return rows;
}
export async function findClient(db, clientId) {
    const { rows } = await db.query(`SELECT ${COLUMNS}, secret_hash FROM oauth_clients WHERE client_id = $1`, [clientId]);
    return rows[0];
}
export async function deleteClient(db, clientId) {
    const { rowCount } = await db.query('DELETE FROM oauth_clients WHERE client_id = $1', [clientId]);
    return (rowCount ?? 0) > 0;
}
export async function updateClientSecret(db, clientId, secretHash) {
    const { rows } = await db.query(`UPDATE oauth_clients SET secret_hash = $2, secret_rotated_at = now() WHERE client_id = $1 RETURNING ${COLUMNS}`, [clientId, secretHash]);
    return rows[0];
}
//# sourceMappingURL=clients.queries.js.map