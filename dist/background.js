import { deleteStaleFailures } from './auth/login-throttle.queries.js';
import { deleteExpiredSessions } from './auth/sessions.queries.js';
import { purgeExpiredOAuthRows } from './oauth/oauth.maintenance.js';
import { purgeDeliveryLog } from './webhooks/delivery/retention.js';
/** Calls fn every intervalMs (first run after one interval) until stopped; errors are logged, not fatal. */
export function every(name, intervalMs, log, fn) {
    let running = Promise.resolve();
    const timer = setInterval(() => {
        running = fn().catch((error) => log.error({ err: error, task: name }, 'background task failed'));
    }, intervalMs);
    timer.unref();
    return {
        name,
        async stop() {
            clearInterval(timer);
            await running;
        },
    };
}
/** Housekeeping every process runs hourly: expired sessions, codes and tokens; delivery attempts older than 30 days. */
export function startMaintenance({ pool, log }) {
    return [
        every('sessions-cleanup', 3_600_000, log, () => deleteExpiredSessions(pool)),
        every('login-failures-cleanup', 3_600_000, log, () => deleteStaleFailures(pool)),
        every('oauth-cleanup', 3_600_000, log, () => purgeExpiredOAuthRows(pool)),
        every('webhook-log-retention', 3_600_000, log, () => purgeDeliveryLog(pool)),
    ];
}
//# sourceMappingURL=background.js.map