// The Redis connection that holds the shared rate-limit counters (REDIS_URL).
// Decision (docs/decisions.md): a Redis outage fails OPEN. The limits are
// fairness budgets, not security controls (the login throttle lives in
// PostgreSQL), so while Redis is away requests are served without them rather
// than refused. @fastify/rate-limit's skipOnError lets a request through when
// the store errors; this module makes that visible: one log line when Redis
// goes away, one when it is back, never one per request.
import { Redis } from 'ioredis';

interface RedisLogger {
  error(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

/** A limit check must never hold a request up for long: a hung Redis counts as an error (fail open). */
const COMMAND_TIMEOUT_MS = 500;

export async function connectRateLimitRedis(url: string, log: RedisLogger): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    // While disconnected, commands fail at once instead of queueing behind the reconnect.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: COMMAND_TIMEOUT_MS,
    // Reconnect for ever, backing off to one attempt every 5 s.
    retryStrategy: (attempt) => Math.min(attempt * 200, 5_000),
  });
  let down = false;
  const wentAway = (error: unknown) => {
    if (down) return;
    down = true;
    log.error({ component: 'redis', err: error }, 'Redis unreachable: rate limits are not enforced (fail open) until it is back');
  };
  redis.on('error', wentAway);
  // A server that shuts down cleanly closes the connection without an error:
  // the client schedules a reconnect, and commands fail (fail open) meanwhile.
  redis.on('reconnecting', () => wentAway(new Error('the connection to Redis was lost; reconnecting')));
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    log.info({ component: 'redis' }, 'Redis reachable again: rate limits enforced');
  });
  // Starting without Redis is the same fail-open state; the client keeps reconnecting.
  await redis.connect().catch(wentAway);
  return redis;
}
