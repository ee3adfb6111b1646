// The delivery log and manual redelivery, as an organization user or the
// subscription's own platform client sees them.
import type { Principal } from '../auth/principal.ts';
import type { Pool } from '../db/pool.ts';
import { withOrg } from '../db/with-org.ts';
import * as errors from '../errors.ts';
import { ValidationProblem } from '../http/problem-details.plugin.ts';
import {
  attemptExists,
  findDelivery,
  listAttempts,
  notifyDeliveriesDue,
  requeueDelivery,
  type Attempt,
  type Delivery,
} from './deliveries.queries.ts';
import { findSubscription } from './subscriptions.queries.ts';

/** An attempt as the API and the pages show it: the row, with its time as ISO 8601 text. */
export type AttemptView = Omit<Attempt, 'subscription_id' | 'attempted_at'> & { attempted_at: string };

export interface DeliveryView {
  id: string;
  subscription_id: string;
  call_id: string;
  event: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  created_at: string;
  finished_at: string | null;
}

function attemptView(row: Attempt): AttemptView {
  return { ...row, attempted_at: row.attempted_at.toISOString() };
}

function deliveryView(row: Delivery): DeliveryView {
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

function visibleClient(principal: Principal): string | undefined {
  return principal.kind === 'oauth' ? principal.clientId : undefined;
}

/** Attempts of one subscription, newest first, one page at a time. */
export async function listAttemptsPage(
  pool: Pool,
  principal: Principal,
  subscriptionId: string,
  input: { limit: number; cursor?: string },
): Promise<{ attempts: AttemptView[]; nextCursor: string | null }> {
  return withOrg(pool, principal.organizationId, async (db) => {
    const subscription = await findSubscription(db, { id: subscriptionId, clientId: visibleClient(principal) });
    if (!subscription) throw new errors.WEBHOOK_SUBSCRIPTION_NOT_FOUND(subscriptionId);
    if (input.cursor !== undefined && !(await attemptExists(db, { subscriptionId, id: input.cursor }))) {
      throw new ValidationProblem([{ field: 'cursor', message: 'is not a cursor from a previous page' }]);
    }
    const rows = await listAttempts(db, { subscriptionId, limit: input.limit + 1, ...(input.cursor ? { afterId: input.cursor } : {}) });
    const page = rows.slice(0, input.limit);
    return { attempts: page.map(attemptView), nextCursor: rows.length > input.limit ? page.at(-1)!.id : null };
  });
}

/**
 * Sends a delivery again (same X-Delivery-Id, next attempt number, a fresh
 * retry schedule). Refused for a delivery dropped when the app's access ended
 * (recover's rule: never sent again, even once the app connects again and its
 * subscription is active), while an attempt is in flight, and for a disabled
 * subscription (enable it first).
 */
export async function redeliver(pool: Pool, principal: Principal, deliveryId: string): Promise<DeliveryView> {
  return withOrg(pool, principal.organizationId, async (db) => {
    const delivery = await findDelivery(db, deliveryId);
    const clientId = visibleClient(principal);
    if (!delivery || (clientId !== undefined && delivery.client_id !== clientId)) throw new errors.WEBHOOK_DELIVERY_NOT_FOUND(deliveryId);
    if (delivery.access_ended) throw new errors.WEBHOOK_DELIVERY_ACCESS_ENDED(deliveryId);
    if (delivery.subscription_status !== 'active') throw new errors.WEBHOOK_SUBSCRIPTION_DISABLED(delivery.subscription_id);
    const requeued = await requeueDelivery(db, deliveryId);
    if (!requeued) {
      // The requeue checks the rule again: a revocation may have dropped the delivery since it was read.
      if ((await findDelivery(db, deliveryId))?.access_ended) throw new errors.WEBHOOK_DELIVERY_ACCESS_ENDED(deliveryId);
      throw new errors.WEBHOOK_DELIVERY_IN_FLIGHT(deliveryId);
    }
    await notifyDeliveriesDue(db);
    return deliveryView(requeued);
  });
}
