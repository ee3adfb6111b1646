import { createHash } from 'node:crypto';
import pg from 'pg';
/** Statement names by SQL text; the texts are the constants of the *.queries.ts files, so the map stays small. */
const statementNames = new Map();
function statementName(text) {
    let name = statementNames.get(text);
    if (name === undefined) {
        name = `sb_${createHash('sha256').update(text).digest('base64url').slice(0, 22)}`;
        statementNames.set(text, name);
    }
    return name;
}
/**
 * Every parameterised query is a named prepared statement on its connection:
 * PostgreSQL parses and plans it once per connection instead of on every
 * call (planning a join through oauth_grant_status costs more than running
 * it). Queries without parameters are sent as they are: they may hold
 * several statements (withOrg's BEGIN), which the extended protocol refuses.
 */
class PreparingClient extends pg.Client {
    query(...args) {
        const [text, values] = args;
        if (typeof text === 'string' && Array.isArray(values) && values.length > 0) {
            args = [{ name: statementName(text), text, values }, ...args.slice(2)];
        }
        return super.query(...args);
    }
}
// timestamptz columns are returned as Date objects; JSON renders them as ISO 8601 UTC.
// connectionTimeoutMillis bounds the wait for a connection (a new one, or a
// free one when all are busy): while the database is away a request fails
// with 503 after at most that long instead of hanging. keepAlive lets the
// kernel notice a server that vanished without closing the socket.
export const POOL_CONNECT_TIMEOUT_MS = 10_000;
export function createPool(connectionString, max = 10) {
    const pool = new pg.Pool({
        connectionString, max, idleTimeoutMillis: 30_000, connectionTimeoutMillis: POOL_CONNECT_TIMEOUT_MS, keepAlive: true, Client: PreparingClient,
    });
    // An idle client losing its connection must not crash the process; the pool replaces it.
    pool.on('error', () => { });
    // pg-pool listens for errors only on idle clients: a checked-out client whose
    // server goes away (a restart in the middle of a transaction) emits 'error'
    // with no listener, which would end the process. The query in flight still
    // rejects, and release() then destroys the broken client.
    pool.on('connect', (client) => client.on('error', () => { }));
    return pool;
}
//# sourceMappingURL=pool.js.map