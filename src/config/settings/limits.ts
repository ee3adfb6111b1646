import { duration, rate, url } from '../kinds.ts';
import { setting } from '../setting.ts';

export const LIMITS = {
  RATE_LIMIT: setting({
    kind: rate,
    default: '300/min',
    meaning: 'Requests per `x-user-token` (per address without one) to `/locations` and `/service-areas`, one budget for both.',
  }),
  REDIS_URL: setting({
    kind: url(['redis:', 'rediss:'], 'redis://redis:6379'),
    default: undefined,
    defaultText: 'unset',
    meaning:
      'Redis holding the rate-limit counters API processes share. Unset: each process counts alone. While Redis is away the limits fail open.',
  }),
  CACHE_MAX_AGE: setting({
    kind: duration(0, 300_000, 's', true),
    default: '10',
    defaultText: '`10` (10 s)',
    meaning:
      'How long a `serve` process may answer from its credential and read caches before it asks PostgreSQL again; changes reach every process through LISTEN/NOTIFY within milliseconds. `0` turns the caches off.',
  }),
};
