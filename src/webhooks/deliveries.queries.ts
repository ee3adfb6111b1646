// Deliveries and attempts as the organization sees them (inside withOrg): the
// API's and the pages' views, and redeliver's requeue. Which deliveries may
// be sent again is recover.queries.ts's rule; the outbox that makes them is
// src/calls/completed-calls.queries.ts.
import type { Queryable } from '../db/pool.ts';
import { REDELIVERABLE } from './recover.queries.ts';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface Delivery {
  id: string;
  organization_id: string;
  subscription_id: string;
  call_id: string;
  event: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date;
  in_flight: boolean;
  created_at: Date;
  finished_at: Date | null;
}

export interface Attempt {
  id: string;
  delivery_id: string;
  subscription_id: string;
  call_id: string;
  attempt: number;
  attempted_at: Date;
  status_code: number | null;
  latency_ms: number | null;
  error: string | null;
  error_message: string | null;
  response_body: string | null;
  outcome: string;
  delivery_status: DeliveryStatus;
  /** The call's trace id (32 hex digits), which every attempt of its deliveries sends in its traceparent. */
  trace_id: string;
}

/**
 * An attempt's trace id: its call's (src/tracing/trace-context.ts, the first
 * 16 bytes of the stored context); for a call stored before contexts were
 * kept, the call id's 16 bytes, as the worker sends it (legacyTraceContext).
 */
const ATTEMPT_TRACE_ID = "coalesce(encode(substr(d.trace_context, 1, 16), 'hex'), replace(d.call_id::text, '-', '')) AS trace_id";

/**
 * A delivery as shown: its attempts count the one in flight (its lease's,
 * webhook_delivery_leases.attempt), as X-Delivery-Attempt numbers it.
 */
const DELIVERY_COLUMNS = `d.id, d.organization_id, d.subscription_id, d.call_id, d.event, d.status,
  coalesce((SELECT l.attempt FROM webhook_delivery_leases l WHERE l.delivery_id = d.id), d.attempts) AS attempts,
  d.next_attempt_at, coalesce((SELECT l.expires_at > now() FROM webhook_delivery_leases l WHERE l.delivery_id = d.id), false) AS in_flight,
  d.created_at, d.finished_at`;

export interface FoundDelivery extends Delivery {
  client_id: string;
  subscription_status: string;
  /** Dropped unsent when the app's access ended (not REDELIVERABLE): never sent again. */
  access_ended: boolean;
}

/**
 * The delivery with its subscription, which is locked FOR KEY SHARE until the
 * transaction ends: a deletion of it (and so of the delivery) or a stop of its
 * grant (webhooks_stop_for_grants) waits for a requeue, or the requeue waits for them
 * and then sees the delivery gone or the subscription disabled.
 */
export async function findDelivery(db: Queryable, id: string): Promise<FoundDelivery | undefined> {
  const { rows } = await db.query<FoundDelivery>(
    `SELECT ${DELIVERY_COLUMNS}, s.client_id, s.status AS subscription_status, NOT coalesce(${REDELIVERABLE}, false) AS access_ended
       FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
      WHERE d.id = $1
        FOR KEY SHARE OF s`,
    [id],
  );
  return rows[0];
}

/**
 * Locks the delivery's row for a requeue, after its subscription's
 * (findDelivery). A claim holds this row locked, without writing it, from
 * the statement that leases it until its commit: requeueDelivery's snapshot,
 * taken once this lock is held, sees every lease committed before, and a
 * claim that comes meanwhile skips the row. Tested in the requeue's own
 * statement instead, the lease was looked for in a snapshot taken before the
 * claim committed, and a delivery in flight was requeued.
 */
export async function lockDeliveryForRequeue(db: Queryable, id: string): Promise<void> {
  await db.query('SELECT 1 FROM webhook_deliveries d WHERE d.id = $1 FOR NO KEY UPDATE OF d', [id]);
}

/**
 * Sends a delivery again now, with a fresh retry schedule; its id (and so
 * X-Delivery-Id) stays. Refused (undefined) while an attempt holds a lease,
 * even one run out that no claim has taken over yet: its worker may still
 * record the attempt under that lease, which would overwrite this requeue
 * (the next claim takes such a delivery over at once). Run after
 * lockDeliveryForRequeue, so that a lease being committed is seen. Refused
 * too for a delivery that is not REDELIVERABLE, checked again on the row as
 * updated: a revocation that drops it after the caller looked wins.
 */
export async function requeueDelivery(db: Queryable, id: string): Promise<Delivery | undefined> {
  const { rows } = await db.query<Delivery>(
    `UPDATE webhook_deliveries d
        SET status = 'pending', next_attempt_at = now(), schedule_start = d.attempts, finished_at = NULL, updated_at = now()
      WHERE d.id = $1 AND NOT EXISTS (SELECT 1 FROM webhook_delivery_leases l WHERE l.delivery_id = d.id) AND ${REDELIVERABLE}
     RETURNING ${DELIVERY_COLUMNS}`,
    [id],
  );
  return rows[0];
}

/**
 * A delivery as the pages list it: with its subscription's URL and state,
 * whether a lease holds it (redeliver waits for that, even for one run out),
 * whether it may be sent again (REDELIVERABLE), and its newest attempt.
 */
export interface ListedDelivery extends FoundDelivery {
  callback_url: string;
  leased: boolean;
  last_attempted_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
}

const LISTED_DELIVERY = `SELECT ${DELIVERY_COLUMNS}, s.client_id, s.callback_url, s.status AS subscription_status,
       NOT coalesce(${REDELIVERABLE}, false) AS access_ended,
       EXISTS (SELECT 1 FROM webhook_delivery_leases l WHERE l.delivery_id = d.id) AS leased,
       last.attempted_at AS last_attempted_at, last.status_code AS last_status_code, last.error AS last_error
  FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
  LEFT JOIN LATERAL (
    SELECT a.attempted_at, a.status_code, a.error FROM webhook_attempts a WHERE a.delivery_id = d.id ORDER BY a.attempt DESC LIMIT 1
  ) last ON true`;

/** The deliveries of one call (one per subscription it went to), in the order they were made; `clientId` narrows to one client's. */
export async function listCallDeliveries(
  db: Queryable,
  input: { callId: string; clientId?: string | undefined },
): Promise<ListedDelivery[]> {
  const { rows } = await db.query<ListedDelivery>(
    `${LISTED_DELIVERY}
      WHERE d.call_id = $1 AND ($2::text IS NULL OR s.client_id = $2)
      ORDER BY d.created_at, s.callback_url, d.id`,
    [input.callId, input.clientId ?? null],
  );
  return rows;
}

/**
 * A subscription's deliveries that have attempts, the one attempted most
 * recently first: walks the attempt log newest first (its index) and keeps
 * each delivery's newest attempt, so a delivery is on one page only, however
 * its attempts interleave with others'. `afterId` is the newest attempt of
 * the previous page's last delivery; each row carries its own as `cursor_id`.
 */
export async function listSubscriptionDeliveries(
  db: Queryable,
  input: { subscriptionId: string; limit: number; afterId?: string },
): Promise<(ListedDelivery & { cursor_id: string })[]> {
  const { rows } = await db.query<ListedDelivery & { cursor_id: string }>(
    `WITH newest AS (
       SELECT a.delivery_id, a.id, a.attempted_at FROM webhook_attempts a
        WHERE a.subscription_id = $1
          AND ($2::uuid IS NULL OR (a.attempted_at, a.id) < (SELECT p.attempted_at, p.id FROM webhook_attempts p WHERE p.id = $2))
          AND NOT EXISTS (SELECT 1 FROM webhook_attempts b WHERE b.delivery_id = a.delivery_id AND b.attempt > a.attempt)
        ORDER BY a.attempted_at DESC, a.id DESC
        LIMIT $3
     )
     SELECT listed.*, newest.id AS cursor_id
       FROM newest JOIN LATERAL (${LISTED_DELIVERY} WHERE d.id = newest.delivery_id) listed ON true
      ORDER BY newest.attempted_at DESC, newest.id DESC`,
    [input.subscriptionId, input.afterId ?? null, input.limit],
  );
  return rows;
}

/** A subscription's deliveries waiting for their first attempt (none has attempts to list), the next due first. */
export async function listUnattemptedDeliveries(
  db: Queryable,
  input: { subscriptionId: string; limit: number },
): Promise<ListedDelivery[]> {
  const { rows } = await db.query<ListedDelivery>(
    `${LISTED_DELIVERY}
      WHERE d.subscription_id = $1 AND d.status = 'pending' AND d.attempts = 0
      ORDER BY d.next_attempt_at, d.id
      LIMIT $2`,
    [input.subscriptionId, input.limit],
  );
  return rows;
}

/** The newest `perDelivery` attempts of each of these deliveries, newest first. */
export async function listAttemptsOfDeliveries(db: Queryable, input: { deliveryIds: string[]; perDelivery: number }): Promise<Attempt[]> {
  const { rows } = await db.query<Attempt>(
    `SELECT a.id, a.delivery_id, a.subscription_id, d.call_id, a.attempt, a.attempted_at, a.status_code, a.latency_ms,
            a.error, a.error_message, a.response_body, a.outcome, d.status AS delivery_status, ${ATTEMPT_TRACE_ID}
       FROM webhook_deliveries d
       JOIN LATERAL (
         SELECT * FROM webhook_attempts x WHERE x.delivery_id = d.id ORDER BY x.attempt DESC LIMIT $2
       ) a ON true
      WHERE d.id = ANY ($1::uuid[])
      ORDER BY a.attempted_at DESC, a.id DESC`,
    [input.deliveryIds, input.perDelivery],
  );
  return rows;
}

/** A subscription's attempts, newest first; `afterId` is the last attempt of the previous page. */
export async function listAttempts(db: Queryable, input: { subscriptionId: string; limit: number; afterId?: string }): Promise<Attempt[]> {
  const { rows } = await db.query<Attempt>(
    `SELECT a.id, a.delivery_id, a.subscription_id, d.call_id, a.attempt, a.attempted_at, a.status_code, a.latency_ms,
            a.error, a.error_message, a.response_body, a.outcome, d.status AS delivery_status, ${ATTEMPT_TRACE_ID}
       FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
      WHERE a.subscription_id = $1
        AND ($2::uuid IS NULL OR (a.attempted_at, a.id) < (SELECT p.attempted_at, p.id FROM webhook_attempts p WHERE p.id = $2))
      ORDER BY a.attempted_at DESC, a.id DESC
      LIMIT $3`,
    [input.subscriptionId, input.afterId ?? null, input.limit],
  );
  return rows;
}

export async function attemptExists(db: Queryable, input: { subscriptionId: string; id: string }): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM webhook_attempts WHERE id = $1 AND subscription_id = $2', [
    input.id,
    input.subscriptionId,
  ]);
  return (rowCount ?? 0) > 0;
}
