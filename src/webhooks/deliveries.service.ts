// The delivery log and manual redelivery, as an organization user or the
// subscription's own platform client sees them.
import { actorOf } from '../audit/audit-actor.ts';
import { writeAuditEvent } from '../audit/audit-events.queries.ts';
import type { Principal } from '../auth/principal.ts';
import type { Pool } from '../db/pool.ts';
import { withOrg } from '../db/with-org.ts';
import * as errors from '../errors.ts';
import { ValidationProblem } from '../http/problem-details.plugin.ts';
import {
  attemptExists,
  findDelivery,
  listAttempts,
  listAttemptsOfDeliveries,
  listCallDeliveries,
  listSubscriptionDeliveries,
  listUnattemptedDeliveries,
  lockDeliveryForRequeue,
  requeueDelivery,
  type Attempt,
  type Delivery,
  type ListedDelivery,
} from './deliveries.queries.ts';
import { notifyDeliveriesDue } from './deliveries-channel.queries.ts';
import { visibleClient, visibleSubscription } from './visible-subscription.ts';

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

/** Attempts of one subscription, newest first, one page at a time. */
export async function listAttemptsPage(
  pool: Pool,
  principal: Principal,
  subscriptionId: string,
  input: { limit: number; cursor?: string },
): Promise<{ attempts: AttemptView[]; nextCursor: string | null }> {
  return withOrg(pool, principal.organizationId, async (db) => {
    await visibleSubscription(db, principal, subscriptionId);
    if (input.cursor !== undefined && !(await attemptExists(db, { subscriptionId, id: input.cursor }))) {
      throw new ValidationProblem([{ field: 'cursor', message: 'is not a cursor from a previous page' }]);
    }
    const rows = await listAttempts(db, { subscriptionId, limit: input.limit + 1, ...(input.cursor ? { afterId: input.cursor } : {}) });
    const page = rows.slice(0, input.limit);
    return { attempts: page.map(attemptView), nextCursor: rows.length > input.limit ? page.at(-1)!.id : null };
  });
}

/** A delivery as the pages list it: the view, its subscription's URL and state, and why it may not be redelivered. */
export interface DeliveryLine extends DeliveryView {
  callback_url: string;
  subscription_status: string;
  /** A worker holds it (its attempt, counted in `attempts`, is not logged yet). */
  in_flight: boolean;
  /** Why redeliver would refuse it now, or null when it may be sent again (the rules of redeliver below). */
  not_redeliverable: 'access_ended' | 'subscription_disabled' | 'in_flight' | null;
  last_attempt: { attempted_at: string; status_code: number | null; error: string | null } | null;
}

/** The newest attempts of a delivery its page shows; older ones are counted, not listed. */
export const ATTEMPTS_SHOWN_PER_DELIVERY = 20;

function deliveryLine(row: ListedDelivery): DeliveryLine {
  return {
    ...deliveryView(row),
    callback_url: row.callback_url,
    subscription_status: row.subscription_status,
    in_flight: row.leased,
    // In redeliver's order: the first refusal it would answer.
    not_redeliverable: row.access_ended
      ? 'access_ended'
      : row.subscription_status !== 'active'
        ? 'subscription_disabled'
        : row.leased
          ? 'in_flight'
          : null,
    last_attempt: row.last_attempted_at
      ? { attempted_at: row.last_attempted_at.toISOString(), status_code: row.last_status_code, error: row.last_error }
      : null,
  };
}

/** The deliveries of one call, one per subscription it went to (a platform sees only its own client's). */
export async function listDeliveriesOfCall(pool: Pool, principal: Principal, callId: string): Promise<DeliveryLine[]> {
  return withOrg(pool, principal.organizationId, async (db) =>
    (await listCallDeliveries(db, { callId, clientId: visibleClient(principal) })).map(deliveryLine),
  );
}

/**
 * A subscription's deliveries, the one attempted most recently first, each
 * with its newest attempts (ATTEMPTS_SHOWN_PER_DELIVERY), one page of
 * deliveries at a time. The cursor is an attempt id, as for listAttemptsPage.
 * The first page also has the deliveries waiting for their first attempt
 * (`waiting`, the next due first, at most `limit`): queued behind an open
 * circuit, say, they have no attempt to be listed by.
 */
export async function listDeliveriesPage(
  pool: Pool,
  principal: Principal,
  subscriptionId: string,
  input: { limit: number; cursor?: string },
): Promise<{ waiting: DeliveryLine[]; deliveries: (DeliveryLine & { attempt_log: AttemptView[] })[]; nextCursor: string | null }> {
  return withOrg(pool, principal.organizationId, async (db) => {
    await visibleSubscription(db, principal, subscriptionId);
    if (input.cursor !== undefined && !(await attemptExists(db, { subscriptionId, id: input.cursor }))) {
      throw new ValidationProblem([{ field: 'cursor', message: 'is not a cursor from a previous page' }]);
    }
    const rows = await listSubscriptionDeliveries(db, {
      subscriptionId,
      limit: input.limit + 1,
      ...(input.cursor ? { afterId: input.cursor } : {}),
    });
    const page = rows.slice(0, input.limit);
    const attempts = await listAttemptsOfDeliveries(db, {
      deliveryIds: page.map((d) => d.id),
      perDelivery: ATTEMPTS_SHOWN_PER_DELIVERY,
    });
    const waiting = input.cursor ? [] : await listUnattemptedDeliveries(db, { subscriptionId, limit: input.limit });
    return {
      waiting: waiting.map(deliveryLine),
      deliveries: page.map((row) => ({
        ...deliveryLine(row),
        attempt_log: attempts.filter((a) => a.delivery_id === row.id).map(attemptView),
      })),
      nextCursor: rows.length > input.limit ? page.at(-1)!.cursor_id : null,
    };
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
    await lockDeliveryForRequeue(db, deliveryId);
    const requeued = await requeueDelivery(db, deliveryId);
    if (!requeued) {
      // The requeue checks the rule again: a revocation may have dropped the delivery since it was read.
      if ((await findDelivery(db, deliveryId))?.access_ended) throw new errors.WEBHOOK_DELIVERY_ACCESS_ENDED(deliveryId);
      throw new errors.WEBHOOK_DELIVERY_IN_FLIGHT(deliveryId);
    }
    await writeAuditEvent(db, {
      organizationId: principal.organizationId,
      type: 'delivery.redelivered',
      actor: actorOf(principal),
      subjectType: 'delivery',
      subjectId: deliveryId,
      details: { subscription_id: delivery.subscription_id, call_id: delivery.call_id },
    });
    await notifyDeliveriesDue(db);
    return deliveryView(requeued);
  });
}
