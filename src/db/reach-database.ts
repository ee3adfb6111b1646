// The first connection to an external PostgreSQL (DATABASE_URL, DATABASE_APP_URL)
// tells two failures apart, each reported under the variable's name:
//   - no server answers (refused, unreachable, timed out, starting up): it may
//     come later, so `serve` and `worker` wait and retry with backoff, logging
//     at once and then at most every 30 s; one-shot commands exit 1;
//   - a server answers and refuses (login, unknown role, missing database, TLS):
//     waiting will not help, so the process stops as on any bad value (exit 78).
// A server that answers the first connection and is gone by the next (the
// migrations') is the first case too: the work that follows the check is
// part of reaching the database, retried or reported the same way.
// Messages name the server's address, never the URL (it holds the password).
import pg from 'pg';
import { ConfigError } from '../config/config.ts';
import { isDatabaseUnavailable } from './availability.ts';
import { POOL_CONNECT_TIMEOUT_MS } from './pool.ts';
import { jitter } from '../tasks/jitter.ts';
import { DatabaseUnreachableError } from './database-unreachable.ts';

/** The part of a pino logger waiting needs. */
export interface WaitLog {
  error(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

export interface DatabaseWait {
  log: WaitLog;
  /** Called when the first attempt fails (serve and worker then answer probes until they listen). */
  onWaiting?: () => Promise<void>;
  /** Ends the wait at once (SIGTERM while waiting): reachDatabase then throws its reason. */
  signal?: AbortSignal;
}

const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 10_000;
const LOG_EVERY_MS = 30_000;

/** host:port/database of a PostgreSQL URL: what messages show instead of the URL. */
export function databaseAddress(url: string): string {
  const parsed = new URL(url);
  const host = parsed.hostname || parsed.searchParams.get('host') || 'localhost';
  return `${host}:${parsed.port || 5432}${parsed.pathname === '/' ? '' : parsed.pathname}`;
}

/** What went wrong, in one line (Node 20 reports a host name's every address as an AggregateError with no message of its own). */
function reason(error: unknown): string {
  const { message, code, errors } = error as { message?: string; code?: string; errors?: unknown[] };
  if (message) return message;
  if (Array.isArray(errors) && errors.length > 0) return errors.map(reason).join('; ');
  return code ?? String(error);
}

function refusal(variable: string, url: string, error: unknown): ConfigError {
  const code = (error as { code?: unknown }).code;
  const address = databaseAddress(url);
  const database = decodeURIComponent(new URL(url).pathname.slice(1));
  if (code === '3D000') {
    return new ConfigError(
      variable,
      `PostgreSQL at ${address} has no such database (${reason(error)}); create it${database ? ` (createdb ${database})` : ''} or name an existing one`,
    );
  }
  if (typeof code === 'string' && (code.startsWith('28') || code === '42501')) {
    return new ConfigError(variable, `PostgreSQL at ${address} refused the login (${reason(error)}); set a user and password it accepts`);
  }
  return new ConfigError(variable, `PostgreSQL at ${address} refused the connection (${reason(error)}); check the URL and its parameters`);
}

/** Connects once and disconnects: throws DatabaseUnreachableError or a ConfigError naming `variable`. */
export async function checkDatabase(variable: string, url: string): Promise<void> {
  const address = databaseAddress(url);
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: POOL_CONNECT_TIMEOUT_MS });
  // A connection that fails later is reported through connect(); this keeps it from being an unhandled 'error' event.
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    if (isDatabaseUnavailable(error)) throw new DatabaseUnreachableError(variable, address, reason(error));
    throw refusal(variable, url, error);
  } finally {
    await client.end().catch(() => {});
  }
}

/** `work`, or its abort reason as soon as `signal` is aborted (what `work` still does is left to finish unawaited). */
async function unlessAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  signal.throwIfAborted();
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  work.catch(() => {}); // settled later, if at all: not an unhandled rejection
  try {
    return await Promise.race([work, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * checkDatabase, then `then` (the migrations); with `wait`, a server that does
 * not answer, or stops answering during `then`, is retried with backoff (0.5 s
 * doubling to 10 s, ±20 %) until it does, and logged at once and then at most
 * every 30 s; `then` runs again each time. Without `wait` it throws
 * DatabaseUnreachableError. A refusal ends the wait with its ConfigError.
 */
export async function reachDatabase(variable: string, url: string, wait?: DatabaseWait, then?: () => Promise<void>): Promise<void> {
  let since: number | undefined;
  let lastLogged: number | undefined;
  let delay = FIRST_RETRY_MS;
  for (;;) {
    try {
      await unlessAborted(checkDatabase(variable, url), wait?.signal);
      try {
        await then?.();
      } catch (error) {
        if (!isDatabaseUnavailable(error)) throw error;
        throw new DatabaseUnreachableError(variable, databaseAddress(url), reason(error));
      }
      if (since !== undefined) {
        wait?.log.info({ variable, address: databaseAddress(url), waited_ms: Date.now() - since }, `${variable}: PostgreSQL answers`);
      }
      return;
    } catch (error) {
      if (!(error instanceof DatabaseUnreachableError) || !wait) throw error;
      const now = Date.now();
      if (since === undefined) {
        since = now;
        await wait.onWaiting?.();
      }
      if (lastLogged === undefined || now - lastLogged >= LOG_EVERY_MS) {
        lastLogged = now;
        wait.log.error(
          { variable, address: error.address, waited_ms: now - since },
          `${error.message}; retrying until it answers (/healthz 200, /readyz 503 meanwhile)`,
        );
      }
      await unlessAborted(sleep(jitter(delay, Math.random, 0.2)), wait.signal);
      delay = Math.min(delay * 2, MAX_RETRY_MS);
    }
  }
}
