// Deliveries and attempts as the organization sees them (inside withOrg), and
// the outbox insert made in the transaction that completes a call.
import type { DeadlineQueryConfig, Queryable } from '../db/pool.ts';

/** The NOTIFY channel that wakes delivery workers. */
export const DELIVERIES_CHANNEL = 'switchboard_webhook_deliveries';

/**
 * A completed call's notification names the subscriptions that got a delivery
 * (ids, comma-separated), so a worker that already holds as many attempts of
 * each of them as the per-subscription cap allows can skip a claim that could
 * take nothing (worker.ts). More than this many, and every other sender
 * (requeue, hand-back, re-enable), send an empty payload: "look at everything".
 * 100 ids fit well inside NOTIFY's 8000-byte payload.
 */
const MAX_NAMED_SUBSCRIPTIONS = 100;

/** The subscriptions a notification names, or null when it names none (look at everything). */
export function subscriptionsNamed(payload: string | undefined): string[] | null {
  return payload ? payload.split(',') : null;
}

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
}

/**
 * A delivery as shown: its attempts count the one in flight (its lease's,
 * migration 0033), as X-Delivery-Attempt numbers it.
 */
const DELIVERY_COLUMNS = `d.id, d.organization_id, d.subscription_id, d.call_id, d.event, d.status,
  coalesce((SELECT l.attempt FROM webhook_delivery_leases l WHERE l.delivery_id = d.id), d.attempts) AS attempts,
  d.next_attempt_at, coalesce((SELECT l.expires_at > now() FROM webhook_delivery_leases l WHERE l.delivery_id = d.id), false) AS in_flight,
  d.created_at, d.finished_at`;

/**
 * The call.completed body of the `call` row, written by PostgreSQL
 * (app_call_completed_event, migration 0030: the same event /calls/recent
 * lists), so the call and its deliveries are written by one statement.
 */
const CALL_COMPLETED_BODY =
  'app_call_completed_event(call.id, call.organization_id, call.created_at, call.summary, call.duration_seconds, call.agent_id)';

/**
 * The transactional outbox (docs/interface.md §6.4) in one statement: `callStatement`
 * (an INSERT or UPDATE of calls RETURNING the completed calls, one or many) runs with the
 * insert of one delivery per active call.completed subscription of the
 * call's organization whose grant still stands (a revocation committing
 * beside this transaction is caught again by the claim; the unique
 * (subscription, call) key makes it exactly once) and, if any was inserted, a NOTIFY, which PostgreSQL delivers only
 * when the surrounding transaction commits, naming the subscriptions (see
 * subscriptionsNamed). Returns each call's columns plus `deliveries_enqueued`
 * (for the whole statement); no row when `callStatement` returned none.
 *
 * A subscription removed or stopped while this runs gets no delivery, and
 * the call is stored all the same: each subscription read is locked FOR KEY
 * SHARE SKIP LOCKED, in id order (the lock the deliveries' foreign-key check
 * takes anyway, taken here first; who else locks it and how:
 * docs/delivery-engine.md, "Locks"). Reading the rows without the lock, the
 * foreign-key check at the end of the statement (which reads the newest
 * version) failed for a subscription deleted after the read.
 *
 * `before`: CTEs (`name AS (…)`, comma-separated) that `callStatement` may
 * read, such as the idempotency key claim of src/calls/idempotency.queries.ts.
 */
export function withCallCompletedOutbox(callStatement: string, before = ''): string {
  return `WITH ${
    before
      ? `${before},
     `
      : ''
  }call AS (${callStatement}),
     -- Each grant is tested once per statement, however many subscriptions
     -- stand on it (an organization's hundreds of subscriptions often share one).
     subscribed_grant AS MATERIALIZED (
       SELECT DISTINCT s.grant_id FROM webhook_subscriptions s
        WHERE s.organization_id IN (SELECT call.organization_id FROM call)
          AND s.event = 'call.completed' AND s.status = 'active'
     ),
     live_grant AS MATERIALIZED (
       SELECT g.grant_id FROM subscribed_grant g WHERE app_grant_is_live(g.grant_id)
     ),
     -- The event and status tests stay here: PostgreSQL re-checks them on the
     -- newest version of a row updated while the lock waited. In id order, as
     -- every locker of several subscriptions takes them: SKIP LOCKED does not
     -- skip a row updated since this statement's snapshot whose newest version
     -- is locked, it waits, and a client's deletion (FOR UPDATE in id order)
     -- waiting meanwhile for a row this statement locked out of order deadlocked.
     subscriber AS MATERIALIZED (
       SELECT s.organization_id, s.id, s.event
         FROM webhook_subscriptions s
        WHERE s.organization_id IN (SELECT call.organization_id FROM call)
          AND s.event = 'call.completed' AND s.status = 'active'
          AND s.grant_id IN (SELECT live_grant.grant_id FROM live_grant)
        ORDER BY s.id
          FOR KEY SHARE OF s SKIP LOCKED
     ),
     deliveries AS (
       INSERT INTO webhook_deliveries (organization_id, subscription_id, call_id, event, body)
       SELECT s.organization_id, s.id, call.id, s.event, ${CALL_COMPLETED_BODY}
         FROM call JOIN subscriber s ON s.organization_id = call.organization_id
       ON CONFLICT ON CONSTRAINT webhook_deliveries_subscription_call_key DO NOTHING
       RETURNING subscription_id
     ),
     enqueued AS (
       SELECT count(*)::int AS n,
              CASE WHEN count(DISTINCT subscription_id) <= ${MAX_NAMED_SUBSCRIPTIONS}
                   THEN string_agg(DISTINCT subscription_id::text, ',') ELSE '' END AS subscriptions
         FROM deliveries
     )
     -- The notification is an uncorrelated subquery: sent once per statement, however many calls it writes.
     SELECT call.*, enqueued.n AS deliveries_enqueued,
            (SELECT pg_notify('${DELIVERIES_CHANNEL}', e.subscriptions) FROM enqueued e WHERE e.n > 0) AS notified
       FROM call, enqueued`;
}

/** Delivered to listeners when the surrounding transaction commits (never before). */
export async function notifyDeliveriesDue(db: Queryable, deadlineMs?: number): Promise<void> {
  const query: DeadlineQueryConfig = { text: 'SELECT pg_notify($1, $2)', values: [DELIVERIES_CHANNEL, ''], query_timeout: deadlineMs };
  await db.query(query);
}

/**
 * A delivery recover may send again: failed for good after its retries, that
 * is, its latest attempt ended 'failed'. A delivery dropped because its
 * subscription's grant ended (migration 0007: failed with no such attempt) is
 * not: the app whose access ended must not receive it later, even once it
 * connects again (redeliver applies the same rule, REDELIVERABLE). `d` is the
 * webhook_deliveries row.
 */
export const RECOVERABLE = `d.status = 'failed' AND (
  SELECT a.outcome FROM webhook_attempts a WHERE a.delivery_id = d.id AND a.attempt = d.attempts) = 'failed'`;
// (A scalar subquery, not EXISTS: the planner may not turn it into a join that
// scans the attempts; it is one lookup in webhook_attempts_delivery_attempt_key
// per candidate delivery.)

/**
 * A delivery redeliver may send again: one that did not fail (pending, or
 * succeeded), or a failed one that recover may send. So the two share one
 * rule, RECOVERABLE: a delivery dropped when the app's access ended is sent by
 * neither. NULL (a failed delivery without attempts) counts as false.
 */
const REDELIVERABLE = `(d.status <> 'failed' OR (${RECOVERABLE}))`;

export interface FoundDelivery extends Delivery {
  client_id: string;
  subscription_status: string;
  /** Dropped unsent when the app's access ended (not REDELIVERABLE): never sent again. */
  access_ended: boolean;
}

/**
 * The delivery with its subscription, which is locked FOR KEY SHARE until the
 * transaction ends: a deletion of it (and so of the delivery) or a stop of its
 * grant (migration 0025) waits for a requeue, or the requeue waits for them
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
 * Recover: a subscription's recoverable deliveries created since `since`,
 * oldest first, at most `limit`, sent again now with a fresh retry schedule
 * (the same requeue as requeueDelivery, so the worker's ordinary claim picks
 * them up). Only rows still 'failed' are touched (re-checked on the locked
 * row): a delivery already requeued, by an earlier recover or a concurrent
 * one, is pending or in flight and is not queued a second time.
 */
export async function requeueFailedDeliveries(
  db: Queryable,
  input: { subscriptionId: string; since: Date; limit: number },
): Promise<{ requeued: number; more: boolean }> {
  const { rowCount } = await db.query(
    `WITH picked AS (
       SELECT d.id FROM webhook_deliveries d
        WHERE d.subscription_id = $1 AND d.created_at >= $2 AND ${RECOVERABLE}
        ORDER BY d.created_at, d.id
        LIMIT $3
     )
     UPDATE webhook_deliveries d
        SET status = 'pending', next_attempt_at = now(), schedule_start = d.attempts, finished_at = NULL, updated_at = now()
       FROM picked
      WHERE d.id = picked.id AND d.status = 'failed'`,
    [input.subscriptionId, input.since, input.limit],
  );
  const { rows } = await db.query<{ more: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.subscription_id = $1 AND d.created_at >= $2 AND ${RECOVERABLE}) AS more`,
    [input.subscriptionId, input.since],
  );
  return { requeued: rowCount ?? 0, more: rows[0]!.more };
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
            a.error, a.error_message, a.response_body, a.outcome, d.status AS delivery_status
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
            a.error, a.error_message, a.response_body, a.outcome, d.status AS delivery_status
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

/** Unfinished deliveries: waiting for their next attempt, and leased to a worker right now (for /metrics). */
export async function countQueuedDeliveries(db: Queryable): Promise<{ pending: number; in_flight: number }> {
  const { rows } = await db.query<{ pending: number; in_flight: number }>(
    `SELECT q.pending - q.in_flight AS pending, q.in_flight
       FROM (SELECT (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending')::int AS pending,
                    (SELECT count(*) FROM webhook_delivery_leases)::int AS in_flight) q`,
  );
  return rows[0]!;
}
