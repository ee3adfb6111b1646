/**
 * Runs fn in one transaction on one connection; commits on success, rolls back
 * on any throw. `begin` may carry statements that open the transaction in the
 * same round trip (see withOrg).
 */
export async function withTransaction(pool, fn, begin = 'BEGIN') {
    const client = await pool.connect();
    try {
        await client.query(begin);
        const result = await fn(client);
        await client.query('COMMIT');
        return result;
    }
    catch (error) {
        await client.query('ROLLBACK').catch(() => { });
        throw error;
    }
    finally {
        client.release();
    }
}
//# sourceMappingURL=transaction.js.map