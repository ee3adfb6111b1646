import { createHash } from 'node:crypto';
import pg from 'pg';
import { activeTracing } from '../tracing/tracing.ts';
import { tracedQuery } from './statement-spans.ts';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/**
 * A query with a client-side deadline: pg reads `query_timeout` per query as
 * well as per client (pg/lib/client.js), though its types list it only on the
 * client; undefined means none. Past it the query fails with "Query read
 * timeout"; the caller then releases the client with that error, so the pool
 * drops the connection.
 */
export type DeadlineQueryConfig = pg.QueryConfig & { query_timeout?: number | undefined };
/** Anything that runs a query: the pool itself or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'> | pg.PoolClient;

/** Statement names by SQL text; the texts are the constants of the *.queries.ts files, so the map stays small. */
const statementNames = new Map<string, string>();

function statementName(text: string): string {
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
  override query(...args: unknown[]): never {
    const [first, values] = args;
    if (typeof first === 'string' && Array.isArray(values) && values.length > 0) {
      args = [{ name: statementName(first), text: first, values }, ...args.slice(2)];
    } else if (isUnnamedQueryConfig(first)) {
      // A config object (say, with a query_timeout): named the same way.
      args = [{ ...first, name: statementName(first.text) }, ...args.slice(1)];
    }
    const tracing = activeTracing();
    if (tracing === undefined) return (super.query as (...a: unknown[]) => never)(...args);
    return tracedQuery(tracing, args, (traced) => (super.query as (...a: unknown[]) => never)(...traced)) as never;
  }
}

function isUnnamedQueryConfig(value: unknown): value is pg.QueryConfig {
  if (typeof value !== 'object' || value === null || 'submit' in value || 'name' in value) return false;
  const config = value as Partial<pg.QueryConfig>;
  return typeof config.text === 'string' && Array.isArray(config.values) && config.values.length > 0;
}

// timestamptz columns are returned as Date objects; JSON renders them as ISO 8601 UTC.
// connectionTimeoutMillis bounds the wait for a connection (a new one, or a
// free one when all are busy): while the database is away a request fails
// with 503 after at most that long instead of hanging. keepAlive lets the
// kernel notice a server that vanished without closing the socket.
export const POOL_CONNECT_TIMEOUT_MS = 10_000;

export function createPool(connectionString: string, max = 10): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: POOL_CONNECT_TIMEOUT_MS,
    keepAlive: true,
    Client: PreparingClient,
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  // pg-pool listens for errors only on idle clients: a checked-out client whose
  // server goes away (a restart in the middle of a transaction) emits 'error'
  // with no listener, which would end the process. The query in flight still
  // rejects, and release() then destroys the broken client.
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}
