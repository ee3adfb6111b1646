// "The database is away" is not "our bug": a request that cannot reach
// PostgreSQL answers 503 with Retry-After (clients such as Zapier retry those),
// and the outage is logged once, not once per request.
import type { Pool } from './pool.ts';

/** What clients are told to wait before retrying while the database is away. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

// Socket errors of the connection to PostgreSQL (Node's errno codes).
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

// SQLSTATEs that mean "this server cannot serve you now", not "your statement is wrong".
const UNAVAILABLE_SQLSTATES = new Set([
  '57P01', // admin_shutdown: the server is stopping and ended this session
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up, shutting down or in recovery
  '53300', // too_many_connections
]);

// node-postgres raises these itself, without any code; the texts are fixed
// strings of pg and pg-pool (PostgreSQL's own errors are told apart
// by SQLSTATE; these never come from the server).
const DRIVER_MESSAGES = [
  /^timeout exceeded when trying to connect$/, // pg-pool: connectionTimeoutMillis while waiting for a client
  /^Connection terminated/, // pg: the socket closed (unexpectedly, or by the connection timeout)
  /^Client has encountered a connection error and is not queryable$/,
  /^Client was closed and is not queryable$/,
  /^Cannot use a pool after calling end on the pool$/,
  /^Query read timeout$/, // pg: a query's query_timeout passed unanswered (the worker's deadline: a connection that died silently)
];

/** True when `error` says PostgreSQL could not be reached or dropped the connection (not a statement error). */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 3) return false;
  const { code, message, errors, cause } = error as { code?: unknown; message?: unknown; errors?: unknown; cause?: unknown };
  if (typeof code === 'string') {
    if (SOCKET_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code)) return true;
    if (/^08[0-9A-Z]{3}$/.test(code)) return true; // class 08: connection exception
  }
  if (typeof message === 'string' && typeof code !== 'string' && DRIVER_MESSAGES.some((pattern) => pattern.test(message))) return true;
  // Node 20 tries every address of a host name and reports an AggregateError.
  if (Array.isArray(errors) && errors.some((inner) => isDatabaseUnavailable(inner, depth + 1))) return true;
  return cause !== undefined && isDatabaseUnavailable(cause, depth + 1);
}

export interface OutageLog {
  /** Records a failure caused by the database being away; logs only the first of an outage (and a reminder each minute). */
  failed(error: unknown): void;
  /** True between the first failure and the next successful connection. */
  readonly down: boolean;
}

const REMINDER_MS = 60_000;

/** The part of a pino (or Fastify) logger this needs. */
interface OutageLogger {
  error(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

/**
 * One log line when an outage starts, one when the pool connects again, and a
 * reminder with the count of refused requests each minute in between.
 * `what` names the component ("http", "webhook-worker"). The start is a
 * warning: most outages end by themselves within seconds (a restart, a
 * failover, the embedded PostgreSQL brought back after a crash); one that
 * lasts to its first reminder is an error.
 */
export function outageLog(pool: Pool, log: OutageLogger, what: string): OutageLog {
  let since: number | undefined;
  let lastLogged = 0;
  let failures = 0;
  pool.on('connect', () => {
    if (since === undefined) return;
    log.info({ component: what, outage_ms: Date.now() - since, failures }, 'database reachable again');
    since = undefined;
  });
  return {
    get down() {
      return since !== undefined;
    },
    failed(error) {
      failures = since === undefined ? 1 : failures + 1;
      const now = Date.now();
      if (since === undefined) {
        since = now;
        lastLogged = now;
        log.warn({ component: what, err: error }, 'database unreachable');
      } else if (now - lastLogged >= REMINDER_MS) {
        lastLogged = now;
        log.error({ component: what, err: error, outage_ms: now - since, failures }, 'database still unreachable');
      }
    },
  };
}
