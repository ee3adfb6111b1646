// The outcome record's statement, record_outcomes (record.queries.ts runs
// it; docs/delivery-engine.md, T5 and "Locks").
import { namedStatement } from '../../db/named-statement.ts';

/**
 * Records many attempts in one statement: each delivery whose lease is still
 * held gets its new state and gives the lease back; every attempt is logged
 * (as 'superseded' when the lease was lost, replacing a 'lease_expired'
 * placeholder for the same attempt number); each subscription's failing
 * streak is ended by a success or started/continued by failures after its
 * last success in the batch, disabling it after `disableAfterMs`. Deliveries
 * that are gone, or whose subscription is deleted while this runs, log
 * nothing (dropped). A 410 under a held lease deletes its subscription in the
 * same statement: one round trip under the same deadline as every other
 * outcome, never a transaction of several.
 */
export const RECORD_OUTCOMES = namedStatement(
  'switchboard_record_outcomes',
  {
    deliveryIds: 'uuid[]',
    leaseTokens: 'uuid[]',
    statuses: 'text[]',
    nextAttemptsAt: 'timestamptz[]',
    attempts: 'int[]',
    attemptedAt: 'timestamptz[]',
    statusCodes: 'int[]',
    latenciesMs: 'int[]',
    errors: 'text[]',
    errorMessages: 'text[]',
    responseBodies: 'text[]',
    outcomes: 'text[]',
    healths: 'text[]',
    disableAfterMs: 'bigint',
    maxInFlight: 'int',
    breakerThreshold: 'int',
    breakerWaitsMs: 'bigint[]',
  },
  `WITH input AS (
     SELECT * FROM unnest(@deliveryIds::uuid[], @leaseTokens::uuid[], @statuses::text[], @nextAttemptsAt::timestamptz[],
                          @attempts::int[], @attemptedAt::timestamptz[], @statusCodes::int[], @latenciesMs::int[],
                          @errors::text[], @errorMessages::text[], @responseBodies::text[], @outcomes::text[], @healths::text[])
       AS i(id, lease_token, status, next_attempt_at, attempt, attempted_at, status_code, latency_ms, error, error_message,
            response_body, outcome, health)
   ),
   -- Each delivery is looked up by id on its own (LIMIT 1: an index probe
   -- per record, never a scan of the table, whatever its statistics say),
   -- and updated by tuple id. A row updated meanwhile (its lease taken by
   -- another worker after it ran out, or handed back) has moved: the
   -- re-check of its newest version fails on the tuple id and it is logged
   -- as superseded, as the lease test alone would have logged it. Reading
   -- them locks nothing.
   found AS MATERIALIZED (
     SELECT i.id, d.ctid, d.organization_id, d.subscription_id
       FROM input i CROSS JOIN LATERAL (
         SELECT d.ctid, d.organization_id, d.subscription_id FROM webhook_deliveries d WHERE d.id = i.id LIMIT 1) d
   ),
   -- The records' subscriptions are locked first, FOR KEY SHARE in id order:
   -- the lock a deletion (FOR UPDATE, then ON DELETE CASCADE to the
   -- deliveries) and the stopping of a grant's subscriptions (FOR UPDATE in
   -- id order, webhooks_stop_for_grants) conflict with, and nothing else does (claims
   -- take FOR KEY SHARE too, the updates below FOR NO KEY UPDATE). A subscription deleted
   -- meanwhile leaves its records out: nothing is written for them (dropped).
   -- Any other stays, with its deliveries, until this transaction ends, so
   -- the attempts' foreign-key check (which reads the newest version) finds
   -- the delivery this statement's snapshot found. Subscriptions before
   -- deliveries, as a deletion and a grant's stop take them: waiting here
   -- holds no delivery another transaction could be waiting for.
   subscribed AS MATERIALIZED (
     SELECT s.id FROM webhook_subscriptions s
      WHERE s.id = ANY (ARRAY(SELECT DISTINCT f.subscription_id FROM found f))
      ORDER BY s.id
        FOR KEY SHARE OF s
   ),
   current AS MATERIALIZED (
     SELECT f.* FROM found f WHERE f.subscription_id IN (SELECT id FROM subscribed)
   ),
   -- A lease that has run out is no longer held, even before another claim
   -- takes the delivery over: that claim may be leasing the row now. Left
   -- alone, such a row is neither locked nor waited for here. A claim that
   -- took the lease over has updated the delivery (its tuple id moved).
   -- The attempt ends: the delivery counts it, and its lease row goes
   -- (the delivery's row first, as every writer of leases takes them).
   released AS (
     UPDATE webhook_deliveries d
        SET status = i.status, next_attempt_at = coalesce(i.next_attempt_at, d.next_attempt_at), attempts = i.attempt,
            finished_at = CASE WHEN i.status = 'pending' THEN NULL ELSE now() END, updated_at = now()
       FROM input i
      WHERE d.ctid = ANY (ARRAY(SELECT c.ctid FROM current c)) AND d.id = i.id
        AND (SELECT l.token = i.lease_token AND l.expires_at > now() FROM webhook_delivery_leases l WHERE l.delivery_id = d.id)
     RETURNING d.id
   ),
   unleased AS (
     DELETE FROM webhook_delivery_leases l WHERE l.delivery_id = ANY (ARRAY(SELECT released.id FROM released))
   ),
   logged AS (
     SELECT i.*, c.organization_id, c.subscription_id, r.id IS NOT NULL AS held
       FROM input i JOIN current c ON c.id = i.id LEFT JOIN released r ON r.id = i.id
   ),
   -- 410 Gone under a held lease: the receiver asked to stop (deleted below).
   gone AS (
     SELECT DISTINCT l.subscription_id FROM logged l WHERE l.held AND l.outcome = 'subscription_removed'
   ),
   attempts AS (
     INSERT INTO webhook_attempts (organization_id, delivery_id, subscription_id, attempt, attempted_at, status_code,
                                   latency_ms, error, error_message, response_body, outcome)
     SELECT organization_id, id, subscription_id, attempt, attempted_at, status_code, latency_ms, error, error_message,
            response_body, CASE WHEN held THEN outcome ELSE 'superseded' END
       FROM logged l
      -- A removed subscription's log goes with it: attempts written here would
      -- outlive their deliveries (the cascade below does not see them).
      WHERE NOT EXISTS (SELECT 1 FROM gone g WHERE g.subscription_id = l.subscription_id)
     ON CONFLICT ON CONSTRAINT webhook_attempts_delivery_attempt_key DO UPDATE
        SET status_code = EXCLUDED.status_code, latency_ms = EXCLUDED.latency_ms, error = EXCLUDED.error,
            error_message = EXCLUDED.error_message, response_body = EXCLUDED.response_body, outcome = EXCLUDED.outcome
      WHERE webhook_attempts.error = 'lease_expired'
   ),
   -- Per subscription of the batch (held attempts, in the order they were
   -- made): what ends or continues its failing streak, and the counts its
   -- endpoint's health is updated from (app_endpoint_health_after).
   turns AS (
     SELECT l.subscription_id, l.attempted_at, l.outcome, l.health,
            max(l.attempted_at) FILTER (WHERE l.health IN ('healthy', 'slow')) OVER w AS last_answer,
            max(l.attempted_at) FILTER (WHERE l.health = 'unhealthy') OVER w AS last_unhealthy
       FROM logged l
      WHERE l.held
     WINDOW w AS (PARTITION BY l.subscription_id)
   ),
   batch AS (
     SELECT subscription_id,
            max(attempted_at) FILTER (WHERE outcome = 'succeeded') AS last_success,
            bool_or(outcome = 'subscription_removed') AS removed,
            count(*) FILTER (WHERE health IN ('healthy', 'slow'))::int AS healthy,
            count(*) FILTER (WHERE health = 'unhealthy')::int AS unhealthy,
            count(*) FILTER (WHERE health IN ('healthy', 'slow') AND (last_unhealthy IS NULL OR attempted_at > last_unhealthy))::int
              AS healthy_after,
            count(*) FILTER (WHERE health = 'unhealthy' AND (last_answer IS NULL OR attempted_at > last_answer))::int
              AS unhealthy_after,
            (array_agg(health = 'slow' ORDER BY attempted_at DESC) FILTER (WHERE health IN ('healthy', 'slow')))[1]
              AS last_answer_slow,
            max(last_unhealthy) AS last_unhealthy
       FROM turns GROUP BY subscription_id
   ),
   streaks AS (
     SELECT g.*,
            (SELECT min(f.attempted_at) FROM logged f
              WHERE f.held AND f.subscription_id = g.subscription_id AND f.outcome IN ('retrying', 'failed')
                AND (g.last_success IS NULL OR f.attempted_at > g.last_success)) AS first_failure
       FROM batch g WHERE NOT g.removed
   ),
   -- Only subscriptions that change are locked and written: a healthy
   -- endpoint at full concurrency costs nothing here. Locked in id order
   -- first: two workers recording outcomes of the same subscriptions at once
   -- would otherwise lock them in any order and could deadlock.
   ordered AS MATERIALIZED (
     SELECT s.id
       FROM webhook_subscriptions s JOIN streaks st ON st.subscription_id = s.id
      CROSS JOIN LATERAL app_endpoint_health_after(s, st.healthy, st.unhealthy, st.healthy_after, st.unhealthy_after,
                                                   st.last_answer_slow, st.last_unhealthy, @maxInFlight::int,
                                                   @breakerThreshold::int, @breakerWaitsMs::bigint[]) h
      WHERE st.first_failure IS NOT NULL OR s.failing_since IS NOT NULL OR (st.healthy > 0 AND NOT s.answered)
         OR (s.concurrency_limit, s.consecutive_failures, s.slow, s.circuit_state, s.circuit_retry_at, s.circuit_opens)
            IS DISTINCT FROM (h.concurrency_limit, h.consecutive_failures, h.slow, h.circuit_state, h.circuit_retry_at, h.circuit_opens)
      ORDER BY s.id
        FOR NO KEY UPDATE OF s
   ),
   -- Each subscription's next state, worked out from the row as written here:
   -- when another worker's record changed it after this statement's
   -- snapshot, that is its newest version (the one locked above), so no
   -- count is lost. (The locking statement's own answer is not: a function or
   -- subquery beside a locked row gives the answer it first gave for the
   -- older version, health-record-race.test.ts.) Its failing streak began at
   -- the first failure after the batch's last success, or goes on from
   -- before when the batch has no success, and disables it once it has
   -- lasted @disableAfterMs.
   marked AS (
     UPDATE webhook_subscriptions s
        SET (failing_since, status, disabled_at, disabled_reason) = (
              SELECT streak.since,
                     CASE WHEN streak.disables THEN 'disabled' ELSE s.status END,
                     CASE WHEN streak.disables THEN now() ELSE s.disabled_at END,
                     CASE WHEN streak.disables THEN 'delivery_failures' ELSE s.disabled_reason END
                FROM (SELECT since.since,
                             s.status = 'active' AND since.since <= now() - @disableAfterMs::bigint * interval '1 millisecond'
                               AS disables
                        FROM (SELECT CASE WHEN st.first_failure IS NOT NULL
                                          THEN coalesce(CASE WHEN st.last_success IS NULL THEN s.failing_since END, st.first_failure)
                                     END AS since) since) streak),
            (concurrency_limit, consecutive_failures, slow, circuit_state, circuit_changed_at, circuit_retry_at, circuit_opens) =
              (SELECT h.* FROM app_endpoint_health_after(s, st.healthy, st.unhealthy, st.healthy_after, st.unhealthy_after,
                                                         st.last_answer_slow, st.last_unhealthy, @maxInFlight::int,
                                                         @breakerThreshold::int, @breakerWaitsMs::bigint[]) h),
            answered = s.answered OR st.healthy > 0,
            updated_at = CASE WHEN st.first_failure IS NULL THEN s.updated_at ELSE now() END
       FROM streaks st JOIN ordered o ON o.id = st.subscription_id
      WHERE s.id = st.subscription_id
     RETURNING s.id, s.status = 'disabled' AND s.disabled_at = now() AS disabled_now, s.circuit_retry_at
   ),
   -- The subscriptions whose receivers answered 410 go, and with them (ON
   -- DELETE CASCADE, at the end of this statement) their deliveries and their
   -- log. Their rows are not also updated above: streaks leaves them out.
   -- Locked for deletion in id order, the order every statement waiting for
   -- subscription locks takes them in. Each removed subscription's audit
   -- event (subscription.deleted, reason gone) is written by its RETURNING: a
   -- data-modifying CTE always runs to its end, RETURNING included, read or
   -- not. The other audit events of a record (circuit.opened, .closed,
   -- subscription.disabled) come from the rows marked changes, through the
   -- trigger webhook_subscriptions_audit_update.
   removed AS (
     DELETE FROM webhook_subscriptions s
      WHERE s.id IN (SELECT r.id FROM webhook_subscriptions r WHERE r.id IN (SELECT g.subscription_id FROM gone g) ORDER BY r.id FOR UPDATE)
     RETURNING app_audit_event(s.organization_id, 'subscription.deleted', 'system', NULL, 'worker', 'subscription',
                               s.id::text, 'gone', app_audit_subscription_details(s)) AS event_id
   )
   SELECT l.id, l.held, l.subscription_id, coalesce(m.disabled_now, false) AS disabled_now, m.circuit_retry_at
     FROM logged l LEFT JOIN marked m ON m.id = l.subscription_id`,
);

/** One row per record the statement found (a record with no row was dropped). */
export interface RecordedRow {
  id: string;
  held: boolean;
  subscription_id: string;
  disabled_now: boolean;
  circuit_retry_at: Date | null;
}
