// The delivery worker's wake-ups: a LISTEN connection (src/db/listen-connection.ts)
// passing each notification's payload on. After a reconnect it reports a
// wake-up naming nothing (look at everything), because notifications sent
// while it was away are lost. This is the worker's own connection, apart from
// the process caches' (src/cache/cache-listener.ts): `switchboard worker` runs
// alone, without caches, and `serve` runs both.
import type { Logger } from 'pino';
import { openListenConnection } from '../../db/listen-connection.ts';

export interface Listener {
  close(): Promise<void>;
}

const COMPONENT = 'webhook-listener';

export async function listen(
  connectionString: string,
  channel: string,
  onWake: (payload?: string) => void,
  log: Logger,
): Promise<Listener> {
  return openListenConnection({ connectionString, channel }, {
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
  });
}
