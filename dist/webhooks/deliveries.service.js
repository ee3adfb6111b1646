import { withOrg } from '../db/with-org.js';
import * as errors from '../errors.js';
import { ValidationProblem } from '../http/problem-details.plugin.js';
import { attemptExists, findDelivery, listAttempts, notifyDeliveriesDue, requeueDelivery } from './deliveries.queries.js';
import { findSubscription } from './subscriptions.queries.js';
function attemptView(row) {
    return { ...row, attempted_at: row.attempted_at.toISOString() };
}
function deliveryView(row) {
    return {
        id: row.id,
        subscription_id: row.subscription_id,
        call_id: row.call_id,
        event: row.event,
        status: row.status,
        attempts: row.attempts,
        next_attempt_at: row.status === 'pending' ? row.next_attempt_at.toISOString() : null,
        created_at: row.created_at.toISOString(),
        finished_at: row.finished_at?.toISOString() ?? null,
    };
}
function visibleClient(principal) {
    return principal.kind === 'oauth' ? principal.clientId : undefined;
}
/** Attempts of one subscription, newest first, one page at a time. */
export async function listAttemptsPage(pool, principal, subscriptionId, input) {
    return withOrg(pool, principal.organizationId, async (db) => {
        const subscription = await findSubscription(db, { id: subscriptionId, clientId: visibleClient(principal) });
        if (!subscription)
            throw new errors.WEBHOOK_SUBSCRIPTION_NOT_FOUND(subscriptionId);
        if (input.cursor !== undefined && !(await attemptExists(db, { subscriptionId, id: input.cursor }))) {
            throw new ValidationProblem([{ field: 'cursor', message: 'is not a cursor from a previous page' }]);
        }
        const rows = await listAttempts(db, { subscriptionId, limit: input.limit + 1, ...(input.cursor ? { afterId: input.cursor } : {}) });
        const page = rows.slice(0, input.limit);
        return { attempts: page.map(attemptView), nextCursor: rows.length > input.limit ? page.at(-1).id : null };
    });
}
/**
 * Sends a delivery again (same X-Delivery-Id, next attempt number, a fresh
 * retry schedule). Refused while an attempt is in flight, and for a disabled
 * subscription (enable it first).
 */
export async function redeliver(pool, principal, deliveryId) {
    return withOrg(pool, principal.organizationId, async (db) => {
        const delivery = await findDelivery(db, deliveryId);
        const clientId = visibleClient(principal);
        if (!delivery || (clientId !== undefined && delivery.client_id !== clientId))
            throw new errors.WEBHOOK_DELIVERY_NOT_FOUND(deliveryId);
        if (delivery.subscription_status !== 'active')
            throw new errors.WEBHOOK_SUBSCRIPTION_DISABLED(delivery.subscription_id);
        const requeued = await requeueDelivery(db, deliveryId);
        if (!requeued)
            throw new errors.WEBHOOK_DELIVERY_IN_FLIGHT(deliveryId);
        await notifyDeliveriesDue(db);
        return deliveryView(requeued);
    });
}
//# sourceMappingURL=deliveries.service.js.map