import { ConfigError } from '../config-error.ts';
import { boolean, duration, durationList, integer, rate, type Kind } from '../kinds.ts';
import { setting } from '../setting.ts';

/** "443,8443" → [443, 8443]; "*" → any port (development and tests with loopback receivers). */
const portList: Kind<readonly number[] | '*'> = {
  accepts: '`*` or ports from 1 to 65535 separated by commas',
  parse(raw, name) {
    if (raw === '*') return '*';
    const ports = raw.split(',').map((item) => item.trim());
    for (const port of ports) {
      if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
        throw new ConfigError(name, `must be * or a comma-separated list of ports 1-65535, got "${raw}"`);
      }
    }
    return [...new Set(ports.map(Number))];
  },
};

export const WEBHOOKS = {
  WEBHOOK_TIMEOUT_MS: setting({
    kind: duration(100, 120_000, 'ms'),
    default: '10000',
    defaultText: '`10000` (10 s)',
    meaning:
      "Time-out of one delivery attempt. A worker's lease on a delivery it sends is this plus half of it (at least 2 s): 15 s by default.",
  }),
  WEBHOOK_RETRY_SCHEDULE: setting({
    kind: durationList,
    default: '10s,1m,5m,30m,2h,5h,10h,14h,20h,24h',
    meaning:
      "Delays before each retry (±10 %); when the attempt after the last delay fails, the delivery has failed for good. Also the circuit breaker's waits.",
  }),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: setting({
    kind: boolean,
    default: 'false',
    meaning: '`true` lets hooks reach loopback and private addresses (development, tests; logged as a warning).',
  }),
  WEBHOOK_RATE_LIMIT: setting({
    kind: rate,
    default: '60/min',
    meaning:
      'Requests per OAuth grant (a platform acting for one user), or per user with an `x-user-token`, to `/webhooks/subscribe` and the webhook management routes, one budget for all of them; past it 429 `REQUEST_RATE_LIMITED` with `Retry-After`. Keeps one connected app from filling the audit log with subscribe and unsubscribe pairs.',
  }),
  WEBHOOK_MAX_SUBSCRIPTIONS: setting({
    kind: integer(1, 100_000),
    default: '100',
    meaning:
      'Active webhook subscriptions an organization may have at once. Past it, subscribing a new URL answers 409 `WEBHOOK_SUBSCRIPTION_LIMIT`; `GET /webhooks` and the Webhooks page show how much is used.',
  }),
  WEBHOOK_ALLOWED_PORTS: setting({
    kind: portList,
    // With private targets allowed (development, tests: receivers on random
    // local ports) an unset list means any port; production keeps 443,8443.
    default: undefined,
    defaultText: '`443,8443` (`*` with private targets allowed)',
    meaning: 'Ports a `hookUrl` may name. Checked at subscribe and before every attempt.',
  }),
};
