// The LISTEN connection that keeps a process's caches true (the channel
// switchboard_cache, which app_cache_notify sends on), on src/db/listen-connection.ts. The caches serve
// only while it is connected: notifications sent while it is away are lost,
// so losing it flushes the caches and turns them off, and getting it back
// flushes them again before turning them on. A heartbeat notices a connection
// that died silently. It is the caches' own connection, apart from the
// delivery worker's (src/webhooks/worker/listener.ts): `switchboard worker`
// runs without caches, and the two reconnect independently.
import type { Logger } from 'pino';
import { HEARTBEAT_MS, openListenConnection } from '../db/listen-connection.ts';
import type { ProcessCaches } from './process-caches.ts';
import { notificationTags } from './tags.ts';

export const CACHE_CHANNEL = 'switchboard_cache';
/** application_name of the LISTEN connection (operators and tests find it in pg_stat_activity). */
export const CACHE_LISTENER_NAME = 'switchboard-cache-listener';
const COMPONENT = 'cache-listener';

export interface CacheListener {
  /** Whether notifications are arriving (the caches are on). */
  readonly connected: boolean;
  close(): Promise<void>;
}

export async function listenForInvalidations(connectionString: string, caches: ProcessCaches, log: Logger): Promise<CacheListener> {
  const connection = await openListenConnection(
    {
      connectionString,
      channel: CACHE_CHANNEL,
      applicationName: CACHE_LISTENER_NAME,
      keepAlive: true,
      heartbeatMs: HEARTBEAT_MS,
    },
    {
      notification(payload) {
        caches.evict(notificationTags(payload));
      },
      lost(error) {
        caches.setEnabled(false);
        log.warn({ err: error, component: COMPONENT }, 'cache LISTEN connection lost; caches off until it is back');
      },
      connected({ reconnected }) {
        // Everything before this moment may have been missed.
        caches.setEnabled(true);
        if (reconnected) log.info({ component: COMPONENT }, 'cache LISTEN connection restored; caches on');
      },
    },
  );
  return {
    get connected() {
      return connection.connected;
    },
    async close() {
      caches.setEnabled(false);
      await connection.close();
    },
  };
}
