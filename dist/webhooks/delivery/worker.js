// The delivery worker: claims due deliveries and attempts them, up to
// `concurrency` at once in this process and MAX_IN_FLIGHT_PER_SUBSCRIPTION
// per subscription across all processes.
//
// It wakes on NOTIFY (a call completed, a delivery was requeued, a hook was
// re-enabled), when one of its own attempts ends (a slot is free), at the next
// scheduled retry or lease expiry (read from the database after every round),
// and on a slow safety poll. It never holds a transaction across HTTP: the
// claim commits a lease, the attempt runs, the outcome is recorded under that
// lease (see claim.queries.ts and attempt.ts).
import { performance } from 'node:perf_hooks';
import { withTransaction } from '../../db/transaction.js';
import { DELIVERIES_CHANNEL } from '../deliveries.queries.js';
import { attemptDelivery, RECORD_MARGIN_MS } from './attempt.js';
import { leaseDueDeliveries, lockClaimableSubscriptions, nextDueAt } from './claim.queries.js';
import { closeDeliveryAgents } from './deliver.js';
import { listen } from './listener.js';
import { insertAttempt } from './record.queries.js';
import { leaseMsFor } from './retry-policy.js';
export const MAX_IN_FLIGHT_PER_SUBSCRIPTION = 10;
const DEFAULT_CONCURRENCY = 64;
const DEFAULT_POLL_INTERVAL_MS = 30_000;
/** After a round that found due work it could not take (caps), look again this soon. */
const BLOCKED_RETRY_MS = 1000;
const ERROR_RETRY_MS = 1000;
const MAX_SUBSCRIPTIONS_PER_CLAIM = 50;
export async function claimDueDeliveries(pool, input) {
    return withTransaction(pool, async (db) => {
        const subscriptionIds = await lockClaimableSubscriptions(db, {
            limit: Math.min(MAX_SUBSCRIPTIONS_PER_CLAIM, input.limit),
            maxInFlight: MAX_IN_FLIGHT_PER_SUBSCRIPTION,
        });
        if (subscriptionIds.length === 0)
            return [];
        const claimed = await leaseDueDeliveries(db, {
            subscriptionIds,
            maxInFlight: MAX_IN_FLIGHT_PER_SUBSCRIPTION,
            limit: input.limit,
            leaseMs: input.leaseMs,
        });
        for (const delivery of claimed) {
            if (delivery.lost_attempt === null)
                continue;
            // Its worker died (or stalled past the lease) mid-attempt: log the attempt as unknown.
            await insertAttempt(db, {
                deliveryId: delivery.id,
                attempt: delivery.lost_attempt,
                attemptedAt: delivery.lost_attempt_at ?? new Date(),
                statusCode: null,
                latencyMs: null,
                error: 'lease_expired',
                errorMessage: 'the worker sending this attempt stopped before recording its outcome',
                responseBody: null,
                outcome: 'retrying',
            });
        }
        return claimed;
    });
}
export async function startDeliveryWorker(options) {
    const { pool, log } = options;
    const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    const pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    const leaseMs = options.leaseMs ?? leaseMsFor(options.config.webhookTimeoutMs);
    if (leaseMs < options.config.webhookTimeoutMs + RECORD_MARGIN_MS) {
        throw new Error(`the delivery lease (${leaseMs} ms) must outlast WEBHOOK_TIMEOUT_MS by at least ${RECORD_MARGIN_MS} ms`);
    }
    const deps = {
        pool,
        secretBox: options.secretBox,
        metrics: options.metrics,
        log,
        timeoutMs: options.config.webhookTimeoutMs,
        allowPrivate: options.config.webhookAllowPrivateTargets,
        allowedPorts: options.config.webhookAllowedPorts,
        retryScheduleMs: options.config.webhookRetryScheduleMs,
        ...(options.random ? { random: options.random } : {}),
    };
    const inFlight = new Set();
    let stopping = false;
    let running = false;
    let again = false;
    let timer;
    let round = Promise.resolve();
    const schedule = (delayMs) => {
        clearTimeout(timer);
        if (stopping)
            return;
        timer = setTimeout(wake, Math.max(0, Math.min(delayMs, pollIntervalMs)));
        timer.unref();
    };
    const launch = (leaseDeadline) => (delivery) => {
        const task = attemptDelivery(deps, delivery, leaseDeadline)
            .catch((error) => log.error({ err: error, delivery_id: delivery.id }, 'webhook delivery attempt could not be recorded; its lease will expire and it will be retried'))
            .finally(() => {
            inFlight.delete(task);
            wake();
        });
        inFlight.add(task);
    };
    const runRound = async () => {
        let blocked = false;
        try {
            do {
                again = false;
                const free = concurrency - inFlight.size;
                if (free <= 0)
                    break; // a finishing attempt wakes us
                // The database set the lease after this moment, so it lasts at least until claimStarted + leaseMs.
                const claimStarted = performance.now();
                const claimed = await claimDueDeliveries(pool, { limit: free, leaseMs });
                claimed.forEach(launch(claimStarted + leaseMs));
                // Claimed while stopping: attempted anyway; stop() waits for them.
                if (stopping)
                    break;
                if (claimed.length === 0)
                    blocked = true;
                else if (claimed.length === free)
                    again = true;
            } while (again && !stopping);
            const due = await nextDueAt(pool);
            if (due) {
                const delay = due.getTime() - Date.now();
                schedule(delay > 0 ? delay : blocked ? BLOCKED_RETRY_MS : 0);
            }
            else {
                schedule(pollIntervalMs);
            }
        }
        catch (error) {
            log.error({ err: error }, 'webhook delivery worker round failed');
            schedule(ERROR_RETRY_MS);
        }
    };
    function wake() {
        if (stopping)
            return;
        if (running) {
            again = true;
            return;
        }
        running = true;
        round = runRound().finally(() => {
            running = false;
            if (again && !stopping)
                wake();
        });
    }
    const listener = await listen(options.databaseUrl, DELIVERIES_CHANNEL, wake, log);
    wake();
    return {
        name: 'webhook-delivery',
        wake,
        async stop() {
            stopping = true;
            clearTimeout(timer);
            await listener.close();
            await round;
            await Promise.allSettled([...inFlight]);
            await closeDeliveryAgents();
        },
    };
}
//# sourceMappingURL=worker.js.map