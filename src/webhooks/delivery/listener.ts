// LISTEN on a dedicated connection (a pooled one would be handed to other
// queries). If the connection drops, it reconnects with backoff and reports a
// wake-up naming nothing (look at everything), because notifications sent
// while it was away are lost. A notification's payload is passed on.
import pg from 'pg';
import type { Logger } from 'pino';

export interface Listener {
  close(): Promise<void>;
}

const MAX_BACKOFF_MS = 10_000;

export async function listen(
  connectionString: string,
  channel: string,
  onWake: (payload?: string) => void,
  log: Logger,
): Promise<Listener> {
  let client: pg.Client | undefined;
  let closed = false;
  let backoffMs = 250;
  let reconnectFailed = false;
  let retryTimer: NodeJS.Timeout | undefined;

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString });
    next.on('notification', (message) => {
      if (message.channel === channel) onWake(message.payload);
    });
    const dropped = (error?: Error) => {
      if (closed || client !== next) return;
      client = undefined;
      log.warn({ err: error, component: 'webhook-listener' }, 'LISTEN connection lost; reconnecting');
      next.end().catch(() => {});
      scheduleReconnect();
    };
    next.on('error', dropped);
    next.on('end', () => dropped());
    await next.connect();
    await next.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    if (closed) {
      await next.end().catch(() => {});
      return;
    }
    client = next;
    backoffMs = 250;
  };

  const scheduleReconnect = () => {
    if (closed) return;
    retryTimer = setTimeout(() => {
      connect().then(
        () => {
          if (reconnectFailed) log.info({ component: 'webhook-listener' }, 'LISTEN connection restored');
          reconnectFailed = false;
          onWake();
        },
        (error) => {
          // Once per outage: the first failed reconnect says so, the following ones stay quiet.
          if (!reconnectFailed) log.warn({ err: error, component: 'webhook-listener' }, 'LISTEN reconnect failed; retrying with backoff');
          reconnectFailed = true;
          backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
          scheduleReconnect();
        },
      );
    }, backoffMs);
    retryTimer.unref();
  };

  await connect();
  return {
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      const current = client;
      client = undefined;
      await current?.end().catch(() => {});
    },
  };
}
