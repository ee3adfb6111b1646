// The LISTEN connection that keeps a process's caches true (migration 0012's
// channel switchboard_cache). The caches serve only while it is connected:
// notifications sent while it is away are lost, so losing it flushes the
// caches and turns them off, and getting it back flushes them again before
// turning them on. A heartbeat notices a connection that died silently.
import pg from 'pg';
import type { Logger } from 'pino';
import type { ProcessCaches } from './process-caches.ts';

export const CACHE_CHANNEL = 'switchboard_cache';
/** application_name of the LISTEN connection (operators and tests find it in pg_stat_activity). */
export const CACHE_LISTENER_NAME = 'switchboard-cache-listener';
const MAX_BACKOFF_MS = 10_000;
const HEARTBEAT_MS = 2_000;

export interface CacheListener {
  /** Whether notifications are arriving (the caches are on). */
  readonly connected: boolean;
  close(): Promise<void>;
}

export async function listenForInvalidations(connectionString: string, caches: ProcessCaches, log: Logger): Promise<CacheListener> {
  let client: pg.Client | undefined;
  let closed = false;
  let backoffMs = 250;
  let retryTimer: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;

  const lose = (next: pg.Client, error?: Error) => {
    if (closed || client !== next) return;
    client = undefined;
    caches.setEnabled(false);
    clearInterval(heartbeat);
    log.warn({ err: error, component: 'cache-listener' }, 'cache LISTEN connection lost; caches off until it is back');
    next.end().catch(() => {});
    scheduleReconnect();
  };

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString, keepAlive: true, application_name: CACHE_LISTENER_NAME });
    next.on('notification', (message) => {
      if (message.channel === CACHE_CHANNEL && client === next) caches.evict((message.payload ?? 'flush').split(','));
    });
    next.on('error', (error) => lose(next, error));
    next.on('end', () => lose(next));
    try {
      await next.connect();
      await next.query(`LISTEN ${CACHE_CHANNEL}`);
    } catch (error) {
      next.end().catch(() => {});
      throw error;
    }
    if (closed) {
      await next.end().catch(() => {});
      return;
    }
    client = next;
    backoffMs = 250;
    // Everything before this moment may have been missed.
    caches.setEnabled(true);
    heartbeat = setInterval(() => {
      const timeout = setTimeout(() => lose(next, new Error('heartbeat unanswered')), HEARTBEAT_MS);
      next.query('SELECT 1').then(() => clearTimeout(timeout), (error: Error) => {
        clearTimeout(timeout);
        lose(next, error);
      });
    }, HEARTBEAT_MS);
    heartbeat.unref();
  };

  const scheduleReconnect = () => {
    if (closed) return;
    retryTimer = setTimeout(() => {
      connect().then(
        () => log.info({ component: 'cache-listener' }, 'cache LISTEN connection restored; caches on'),
        () => {
          backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
          scheduleReconnect();
        },
      );
    }, backoffMs);
    retryTimer.unref();
  };

  await connect();
  return {
    get connected() {
      return client !== undefined;
    },
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      clearInterval(heartbeat);
      caches.setEnabled(false);
      const current = client;
      client = undefined;
      await current?.end().catch(() => {});
    },
  };
}
