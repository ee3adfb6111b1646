// The claim's second statement, claim_leases: leases the due deliveries of
// the subscriptions the first one locked (claim.queries.ts runs it;
// docs/delivery-engine.md, T2 and T4).
import { type NamedStatement, namedStatement } from '../../db/named-statement.ts';
import type { SecretFormat } from '../signing-secret.ts';
import { capOf, DEGRADED, ELIGIBLE, inFlight, liveGrants, UNLEASED } from './claim-predicates.queries.ts';

export const CLAIM_LEASES_PARAMETERS = {
  /** Deliveries to lease at most. */
  limit: 'int',
  /** Of those, deliveries to degraded endpoints at most. */
  degradedLimit: 'int',
  leaseMs: 'int',
  slowMs: 'int',
  /** Subscriptions whose attempts in flight in this worker hold degraded slots. */
  degraded: 'uuid[]',
} as const;

/** One row per delivery leased. */
export interface LeasedDelivery {
  id: string;
  organization_id: string;
  subscription_id: string;
  call_id: string;
  event: string;
  body: string;
  /** This attempt's number (X-Delivery-Attempt), counted over the delivery's life. */
  attempt: number;
  /** Attempts made before the current retry schedule began. */
  schedule_start: number;
  lease_token: string;
  /** The call's trace context (src/tracing/trace-context.ts); null for a delivery made before contexts were kept. */
  trace_context: Buffer | null;
  callback_url: string;
  secret_ciphertext: Buffer | null;
  /** The rule that keys webhook-signature (unused without a secret). */
  secret_format: SecretFormat;
  /** Set when the previous holder's lease ran out: that attempt's number and start. */
  lost_attempt: number | null;
  lost_attempt_at: Date | null;
  /** Its endpoint was degraded when claimed: the attempt holds one of the worker's degraded slots. */
  degraded: boolean;
  /** Attempts of its subscription allowed in flight when claimed (across all workers). */
  cap: number;
  /** More of its subscription's deliveries were due than the claim took. */
  backlogged: boolean;
}

/**
 * Leases due deliveries of the locked subscriptions (re-checked, with their
 * grants: a new snapshot, taken after the locks), logs attempts whose lease
 * ran out, and returns the leased deliveries. Written in three steps: pick
 * (pickDue), lock (LOCK_PICKED), then lease and log (LEASE_LOCKED).
 * `maxInFlight` is the per-subscription cap, written into the text (a
 * constant the planner reads).
 */
export function claimLeases(maxInFlight: number): NamedStatement<typeof CLAIM_LEASES_PARAMETERS> {
  return namedStatement(
    `switchboard_claim_leases_${maxInFlight}`,
    CLAIM_LEASES_PARAMETERS,
    `${pickDue(maxInFlight)}\n${LOCK_PICKED}\n${LEASE_LOCKED}`,
  );
}

/**
 * The due deliveries to lease (the CTEs held to picked). Fairness:
 * deliveries are taken in turns per organization, and within one in turns
 * per subscription. Endpoints in good health and degraded ones are counted
 * against separate limits (the worker's slots).
 */
function pickDue(maxInFlight: number): string {
  const cap = capOf(maxInFlight);
  return `WITH held AS MATERIALIZED (
  SELECT s.* FROM webhook_subscriptions s
   WHERE s.id = ANY (string_to_array(current_setting('switchboard.claim_subscriptions', true), ',')::uuid[])
     AND ${ELIGIBLE}
),
live_grant AS MATERIALIZED (${liveGrants('held')}),
-- MATERIALIZED: each subscription's free slots are counted once, not once per candidate row.
slots AS MATERIALIZED (
  SELECT s.id, s.organization_id, s.callback_url, s.secret_ciphertext, s.secret_format, ${DEGRADED} AS degraded, ${cap} AS cap,
         ${cap} - (${inFlight(maxInFlight)})::int AS free
    FROM held s
   WHERE s.grant_id IN (SELECT live_grant.grant_id FROM live_grant)
),
-- The inner LIMIT is the constant cap, so the planner walks the index for a
-- few rows instead of sorting the subscription's whole backlog; the free
-- slots are counted off after. The claim lock keeps other claimers
-- away, and the lock below re-checks each row.
candidates AS MATERIALIZED (
  SELECT c.id, c.ctid, c.attempts, c.next_attempt_at, c.due, slots.callback_url, slots.secret_ciphertext, slots.secret_format, slots.degraded, slots.cap,
         row_number() OVER (PARTITION BY slots.organization_id ORDER BY c.n, c.next_attempt_at) AS turn
    FROM slots, LATERAL (
      SELECT first.*, row_number() OVER (ORDER BY first.next_attempt_at) AS n, count(*) OVER () AS due
        FROM (SELECT d.id, d.ctid, d.attempts, d.next_attempt_at
                FROM webhook_deliveries d
               WHERE d.subscription_id = slots.id AND d.status = 'pending' AND d.next_attempt_at <= now() AND ${UNLEASED}
               ORDER BY d.next_attempt_at
               -- One more than the cap: whether more is due than a claim may take.
               LIMIT ${maxInFlight + 1}) first
    ) c
   WHERE c.n <= slots.free
),
-- Turn by turn across organizations: degraded endpoints up to the degraded
-- share's free slots, and all of them together up to the free slots.
picked AS MATERIALIZED (
  SELECT ranked.* FROM (
    SELECT allowed.*, row_number() OVER (ORDER BY allowed.turn, allowed.next_attempt_at) AS place
      FROM (SELECT candidates.*,
                   row_number() OVER (PARTITION BY candidates.degraded ORDER BY candidates.turn, candidates.next_attempt_at) AS pool_place
              FROM candidates) allowed
     WHERE NOT allowed.degraded OR allowed.pool_place <= @degradedLimit) ranked
   WHERE ranked.place <= @limit
),`;
}

/** The picked deliveries, locked, and the leases that ran out on them (the CTEs claimable and old). */
const LOCK_PICKED = `-- The picked deliveries are locked by their tuple ids (a TID scan: a join to
-- picked let a generic plan, made while the table was small, walk the due
-- index once per picked row), and read whole here, for the attempt. A row
-- updated since this statement's snapshot (its outcome recorded, handed
-- back, requeued) has moved: PostgreSQL re-checks the newest version, its
-- tuple id no longer matches, and it is left for the next claim. The state
-- test is written as a CASE so that no index matches it: written plainly, a
-- generic plan walked the whole due index and filtered on the tuple ids. A
-- row another transaction is writing (an outcome recorded as its lease runs
-- out) is left for the next claim, not waited for. Every writer of a lease
-- holds its delivery's row first (docs/delivery-engine.md, "Locks").
claimable AS MATERIALIZED (
  SELECT d.ctid, d.id, d.organization_id, d.subscription_id, d.call_id, d.event, d.body, d.schedule_start, d.trace_context
    FROM webhook_deliveries d
   WHERE d.ctid = ANY (ARRAY(SELECT picked.ctid FROM picked))
     AND CASE WHEN d.status = 'pending' AND d.next_attempt_at <= now() THEN true ELSE false END
     FOR NO KEY UPDATE OF d SKIP LOCKED
),
-- Leases that ran out on the locked deliveries: their attempts were lost,
-- and this claim takes them over.
old AS MATERIALIZED (
  SELECT l.delivery_id, l.attempt, l.started_at FROM webhook_delivery_leases l
   WHERE l.delivery_id = ANY (ARRAY(SELECT claimable.id FROM claimable))
),`;

/** The leases written, lost attempts counted and logged, and the leased deliveries read back. */
const LEASE_LOCKED = `-- The lost attempt is counted on its delivery, whose row so moves, and a
-- late record of that attempt finds it moved and is logged as superseded
-- (record.queries.ts).
counted AS (
  UPDATE webhook_deliveries d SET attempts = d.attempts + 1, updated_at = now()
   WHERE d.ctid = ANY (ARRAY(SELECT claimable.ctid FROM claimable WHERE claimable.id IN (SELECT old.delivery_id FROM old)))
),
-- The leases: a row each, its attempt the delivery's attempts + 1 (counting
-- a lost attempt). A lease still live is never replaced.
leased AS (
  INSERT INTO webhook_delivery_leases AS l (delivery_id, organization_id, subscription_id, token, attempt, started_at, expires_at)
  SELECT claimable.id, claimable.organization_id, claimable.subscription_id, gen_random_uuid(),
         coalesce(old.attempt, picked.attempts) + 1, now(), now() + @leaseMs * interval '1 millisecond'
    FROM claimable JOIN picked ON picked.ctid = claimable.ctid LEFT JOIN old ON old.delivery_id = claimable.id
  ON CONFLICT (delivery_id) DO UPDATE
     SET token = EXCLUDED.token, attempt = EXCLUDED.attempt, started_at = EXCLUDED.started_at, expires_at = EXCLUDED.expires_at
   WHERE l.expires_at <= now()
  RETURNING l.delivery_id, l.token, l.attempt
),
claimed AS (
  SELECT claimable.id, claimable.organization_id, claimable.subscription_id, claimable.call_id, claimable.event,
         claimable.body, leased.attempt, claimable.schedule_start, leased.token AS lease_token, claimable.trace_context,
         picked.callback_url, picked.secret_ciphertext, picked.secret_format, picked.degraded, picked.cap,
         -- More of its deliveries are due than this claim took.
         picked.due > count(*) OVER (PARTITION BY claimable.subscription_id) AS backlogged,
         old.attempt AS lost_attempt, old.started_at AS lost_attempt_at
    FROM leased JOIN claimable ON claimable.id = leased.delivery_id JOIN picked ON picked.id = leased.delivery_id
    LEFT JOIN old ON old.delivery_id = leased.delivery_id
),
-- Its worker died (or stalled past the lease) mid-attempt: log that attempt as
-- unknown. The late worker's own record, if it comes, replaces this placeholder.
lost AS (
  INSERT INTO webhook_attempts (organization_id, delivery_id, subscription_id, attempt, attempted_at, error, error_message, outcome)
  SELECT organization_id, id, subscription_id, lost_attempt, lost_attempt_at, 'lease_expired',
         'the worker sending this attempt stopped before recording its outcome', 'retrying'
    FROM claimed WHERE lost_attempt IS NOT NULL
  ON CONFLICT ON CONSTRAINT webhook_attempts_delivery_attempt_key DO NOTHING
)
SELECT * FROM claimed`;
