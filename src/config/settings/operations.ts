import { duration, integer } from '../kinds.ts';
import { setting } from '../setting.ts';

const DAY = 86_400_000;

export const OPERATIONS = {
  WORKER_PORT: setting({
    kind: integer(0, 65535),
    default: '0',
    meaning:
      'Where `switchboard worker` serves `/healthz`, `/readyz` and `/metrics`; `0` takes a free port, printed at start. Set one in production.',
  }),
  AUDIT_RETENTION: setting({
    kind: duration(DAY, 3650 * DAY),
    default: '400d',
    meaning:
      'How long the audit log (`GET /audit-events`, the Activity page) keeps an event; older ones are removed by the hourly maintenance task, in batches.',
  }),
  SHUTDOWN_TIMEOUT: setting({
    kind: duration(1000, 600_000),
    default: '30s',
    meaning:
      'After SIGTERM/SIGINT the process exits within this long: HTTP drains, running delivery attempts finish for about 60 % of it and the rest are handed back (due now, other workers notified); past it the exit status is 1.',
  }),
};
