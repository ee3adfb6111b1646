import pg from 'pg';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Anything that runs a query: the pool itself or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'> | pg.PoolClient;

// timestamptz columns are returned as Date objects; JSON renders them as ISO 8601 UTC.
// connectionTimeoutMillis bounds the wait for a connection (a new one, or a
// free one when all are busy): while the database is away a request fails
// with 503 after at most that long instead of hanging. keepAlive lets the
// kernel notice a server that vanished without closing the socket.
export const POOL_CONNECT_TIMEOUT_MS = 10_000;

export function createPool(connectionString: string, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString, max, idleTimeoutMillis: 30_000, connectionTimeoutMillis: POOL_CONNECT_TIMEOUT_MS, keepAlive: true });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  // pg-pool listens for errors only on idle clients: a checked-out client whose
  // server goes away (a restart in the middle of a transaction) emits 'error'
  // with no listener, which would end the process. The query in flight still
  // rejects, and release() then destroys the broken client.
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}
