// A dedicated connection that LISTENs on one channel and keeps itself up.
// Dedicated, because a pooled connection would be handed to other queries and
// its LISTEN would go with it. When the connection drops (an error, the
// server ending it, or an unanswered heartbeat) it is ended and reconnected
// with backoff: 250 ms, doubling to 10 s, back to 250 ms once connected.
// Notifications sent while it is away are lost; what that means is the
// user's to say, through the hooks (the delivery worker looks at everything,
// the process caches turn off).
import pg from 'pg';

const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 10_000;
/** The heartbeat both of the app's LISTEN connections use: a silently dead one is noticed within two of these. */
export const HEARTBEAT_MS = 2_000;

export interface ListenConnectionOptions {
  connectionString: string;
  channel: string;
  /** Shown in pg_stat_activity, where operators (and tests) find the connection. */
  applicationName?: string;
  /** TCP keepalive on the socket. */
  keepAlive?: boolean;
  /**
   * `SELECT 1` this often; no answer within the same time counts as lost.
   * A connection that died silently (no FIN, no error) is noticed only so.
   */
  heartbeatMs?: number;
}

export interface ListenConnectionHooks {
  /**
   * LISTEN is in place. `reconnected`: not the first connect, so notifications
   * may have been missed; `failedAttempts`: reconnects that failed first.
   */
  connected?(event: { reconnected: boolean; failedAttempts: number }): void;
  /** The connection dropped; a reconnect is scheduled. */
  lost?(error: Error | undefined): void;
  /** A reconnect failed; another is scheduled. `attempt` counts from 1 in each outage. */
  reconnectFailed?(error: unknown, attempt: number): void;
  /** A notification on the channel, while connected. */
  notification(payload: string | undefined): void;
}

export interface ListenConnection {
  /** Whether LISTEN is in place (notifications are arriving). */
  readonly connected: boolean;
  /** Ends the connection and any reconnecting; no hook is called afterwards. */
  close(): Promise<void>;
}

/** Connects and LISTENs; rejects if the first connect fails (no retry then). */
export async function openListenConnection(options: ListenConnectionOptions, hooks: ListenConnectionHooks): Promise<ListenConnection> {
  let client: pg.Client | undefined;
  let closed = false;
  let everConnected = false;
  let backoffMs = FIRST_BACKOFF_MS;
  let failedAttempts = 0;
  let retryTimer: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;

  const lose = (next: pg.Client, error?: Error) => {
    if (closed || client !== next) return;
    client = undefined;
    clearInterval(heartbeat);
    hooks.lost?.(error);
    next.end().catch(() => {});
    scheduleReconnect();
  };

  const startHeartbeat = (next: pg.Client, everyMs: number) => {
    heartbeat = setInterval(() => {
      const timeout = setTimeout(() => lose(next, new Error('heartbeat unanswered')), everyMs);
      next.query('SELECT 1').then(
        () => clearTimeout(timeout),
        (error: Error) => {
          clearTimeout(timeout);
          lose(next, error);
        },
      );
    }, everyMs);
    heartbeat.unref();
  };

  const connect = async (): Promise<void> => {
    const next = new pg.Client({
      connectionString: options.connectionString,
      keepAlive: options.keepAlive,
      application_name: options.applicationName,
    });
    next.on('notification', (message) => {
      if (message.channel === options.channel && client === next) hooks.notification(message.payload);
    });
    next.on('error', (error) => lose(next, error));
    next.on('end', () => lose(next));
    try {
      await next.connect();
      await next.query(`LISTEN ${pg.escapeIdentifier(options.channel)}`);
    } catch (error) {
      next.end().catch(() => {});
      throw error;
    }
    if (closed) {
      await next.end().catch(() => {});
      return;
    }
    client = next;
    backoffMs = FIRST_BACKOFF_MS;
    const event = { reconnected: everConnected, failedAttempts };
    everConnected = true;
    failedAttempts = 0;
    hooks.connected?.(event);
    if (options.heartbeatMs) startHeartbeat(next, options.heartbeatMs);
  };

  const scheduleReconnect = () => {
    if (closed) return;
    retryTimer = setTimeout(() => {
      connect().catch((error: unknown) => {
        if (closed) return;
        failedAttempts++;
        hooks.reconnectFailed?.(error, failedAttempts);
        backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
        scheduleReconnect();
      });
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
      const current = client;
      client = undefined;
      await current?.end().catch(() => {});
    },
  };
}
