// One attempt of one claimed delivery: build the request, send it, decide
// what the result means, record it. The claim's transaction is long
// committed; the outcome is written in a new short one, guarded by the lease.
import { performance } from 'node:perf_hooks';
import { withTransaction } from '../../db/transaction.js';
import { deliver } from './deliver.js';
import { deleteSubscriptionById, insertAttempt, markSubscriptionFailing, markSubscriptionHealthy, releaseDelivery, returnUnsentClaim, } from './record.queries.js';
import { decide, DISABLE_AFTER_FAILING_MS } from './retry-policy.js';
import { deliveryHeaders } from './request.js';
/** Time an attempt must still have on its lease after its own time-out, to record the outcome. */
export const RECORD_MARGIN_MS = 1000;
async function send(deps, claimed) {
    let secret;
    try {
        secret = claimed.secret_ciphertext ? deps.secretBox.open(claimed.secret_ciphertext, claimed.organization_id) : undefined;
    }
    catch {
        // Never send an unsigned request for a subscription that asked for a signature.
        return { kind: 'error', error: 'internal', message: 'the subscription secret could not be decrypted (was SECRET_KEY changed?)', latencyMs: 0 };
    }
    const headers = deliveryHeaders({
        deliveryId: claimed.id,
        attempt: claimed.attempt,
        event: claimed.event,
        body: claimed.body,
        secret,
        timestamp: Math.floor(Date.now() / 1000),
    });
    return deliver({ url: claimed.callback_url, body: claimed.body, headers, timeoutMs: deps.timeoutMs, allowPrivate: deps.allowPrivate,
        allowedPorts: deps.allowedPorts });
}
function attemptRecord(claimed, attemptedAt, result, outcome) {
    return {
        deliveryId: claimed.id,
        attempt: claimed.attempt,
        attemptedAt,
        statusCode: result.kind === 'response' ? result.status : null,
        latencyMs: result.latencyMs,
        error: result.kind === 'error' ? result.error : null,
        errorMessage: result.kind === 'error' ? result.message.slice(0, 1000) : null,
        responseBody: result.kind === 'response' ? result.bodyExcerpt : null,
        outcome,
    };
}
function deliveryState(decision, now) {
    switch (decision.outcome) {
        case 'succeeded':
            return { status: 'succeeded', nextAttemptAt: null };
        case 'retrying':
            return { status: 'pending', nextAttemptAt: new Date(now + decision.delayMs) };
        case 'failed':
        case 'subscription_removed':
            return { status: 'failed', nextAttemptAt: null };
    }
}
/** Records the attempt; returns the outcome as logged ('superseded' when the lease was lost). */
async function record(deps, claimed, attemptedAt, result, decision) {
    return withTransaction(deps.pool, async (db) => {
        const state = deliveryState(decision, Date.now());
        const held = await releaseDelivery(db, { id: claimed.id, leaseToken: claimed.lease_token, ...state });
        if (!held) {
            await insertAttempt(db, attemptRecord(claimed, attemptedAt, result, 'superseded'));
            return 'superseded';
        }
        await insertAttempt(db, attemptRecord(claimed, attemptedAt, result, decision.outcome));
        if (decision.outcome === 'succeeded') {
            await markSubscriptionHealthy(db, claimed.subscription_id);
        }
        else if (decision.outcome === 'subscription_removed') {
            await deleteSubscriptionById(db, claimed.subscription_id);
        }
        else {
            const disabled = await markSubscriptionFailing(db, {
                subscriptionId: claimed.subscription_id,
                attemptedAt,
                disableAfterMs: DISABLE_AFTER_FAILING_MS,
            });
            if (disabled)
                deps.log.warn({ subscription_id: claimed.subscription_id }, 'webhook subscription disabled after five days of failures');
        }
        return decision.outcome;
    });
}
/**
 * `leaseDeadline` is when (on performance.now()'s clock) the lease runs out at
 * the latest. An attempt that could outlive it is not sent at all: another
 * worker could claim the delivery meanwhile and send the same attempt again.
 */
export async function attemptDelivery(deps, claimed, leaseDeadline) {
    if (performance.now() + deps.timeoutMs + RECORD_MARGIN_MS > leaseDeadline) {
        deps.log.warn({ delivery_id: claimed.id }, 'webhook delivery claim too old to send safely; returned unsent');
        await returnUnsentClaim(deps.pool, { id: claimed.id, leaseToken: claimed.lease_token });
        return;
    }
    const attemptedAt = new Date();
    const result = await send(deps, claimed);
    const decision = decide(result, {
        attemptInSchedule: claimed.attempt - claimed.schedule_start,
        scheduleMs: deps.retryScheduleMs,
        now: new Date(),
        random: deps.random ?? Math.random,
    });
    const outcome = await record(deps, claimed, attemptedAt, result, decision);
    deps.metrics.deliveries.inc({ outcome });
    deps.metrics.deliveryLatency.observe({ outcome }, result.latencyMs / 1000);
    deps.log.info({
        delivery_id: claimed.id,
        subscription_id: claimed.subscription_id,
        attempt: claimed.attempt,
        status: result.kind === 'response' ? result.status : undefined,
        error: result.kind === 'error' ? result.error : undefined,
        latency_ms: result.latencyMs,
        outcome,
    }, 'webhook delivery attempt');
}
//# sourceMappingURL=attempt.js.map