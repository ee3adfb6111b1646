// The delivery worker's wake-ups: a LISTEN connection (src/db/listen-connection.ts)
// passing each notification's payload on. After a reconnect it reports a
// wake-up naming nothing (look at everything), because notifications sent
// while it was away are lost. A heartbeat notices a connection that died
// silently (no FIN, no error: a dropped route, a NAT or firewall forgetting
// it): without one the worker would learn of new work only at its safety
// poll. This is the worker's own connection, apart from the process caches'
// (src/cache/cache-listener.ts): `switchboard worker` runs alone, without
// caches, and `serve` runs both.
import type { Logger } from 'pino';
import { HEARTBEAT_MS, openListenConnection } from '../../db/listen-connection.ts';

export interface Listener {
  close(): Promise<void>;
}

/** application_name of the LISTEN connection (operators and tests find it in pg_stat_activity). */
export const WORKER_LISTENER_NAME = 'switchboard-worker-listener';
const COMPONENT = 'webhook-listener';

export async function listen(
  connectionString: string,
  channel: string,
  onWake: (payload?: string) => void,
  log: Logger,
  heartbeatMs = HEARTBEAT_MS,
): Promise<Listener> {
  return openListenConnection(
    { connectionString, channel, applicationName: WORKER_LISTENER_NAME, keepAlive: true, heartbeatMs },
    {
      notification: onWake,
      lost(error) {
        log.warn({ err: error, component: COMPONENT }, 'LISTEN connection lost; reconnecting');
      },
      reconnectFailed(error, attempt) {
        // Once per outage: the first failed reconnect says so, the following ones stay quiet.
        if (attempt === 1) log.warn({ err: error, component: COMPONENT }, 'LISTEN reconnect failed; retrying with backoff');
      },
      connected({ reconnected, failedAttempts }) {
        if (!reconnected) return;
        if (failedAttempts > 0) log.info({ component: COMPONENT }, 'LISTEN connection restored');
        onWake();
      },
    },
  );
}
