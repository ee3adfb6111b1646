import { isDatabaseUnavailable } from './availability.js';
/**
 * Runs fn in one transaction on one connection; commits on success, rolls back
 * on any throw. `begin` may carry statements that open the transaction in the
 * same round trip (see withOrg).
 */
export async function withTransaction(pool, fn, begin = 'BEGIN') {
    const client = await pool.connect();
    let failure;
    try {
        await client.query(begin);
        const result = await fn(client);
        await client.query('COMMIT');
        return result;
    }
    catch (error) {
        await client.query('ROLLBACK').catch(() => { });
        failure = error;
        throw error;
    }
    finally {
        // A connection that failed is destroyed, not handed to the next request.
        client.release(isDatabaseUnavailable(failure) ? failure : undefined);
    }
}
//# sourceMappingURL=transaction.js.map