// The claim's first statement, claim_subscriptions: which subscriptions this
// claim takes (claim.queries.ts runs it; docs/delivery-engine.md, "One round
// of the worker", step 3).
import { type NamedStatement, namedStatement } from '../../db/named-statement.ts';
import { tryClaimLock } from '../claim-lock.ts';
import { capOf, DEGRADED, DEGRADED_KNOWN, ELIGIBLE, inFlight, liveGrants, UNLEASED } from './claim-predicates.queries.ts';

export const CLAIM_SUBSCRIPTIONS_PARAMETERS = {
  /** Deliveries to lease at most. */
  limit: 'int',
  /** Of those, deliveries to degraded endpoints at most. */
  degradedLimit: 'int',
  /** Subscriptions locked, at most. */
  maxSubscriptions: 'int',
  leaseMs: 'int',
  slowMs: 'int',
  /** The walk goes on after this subscription id (NULL: from the first). */
  cursor: 'uuid',
  /** Subscriptions known to have due work. */
  hints: 'uuid[]',
  /** Subscriptions with pending deliveries the walk visits, at most. */
  walk: 'int',
  /** Subscriptions whose attempts in flight in this worker hold degraded slots. */
  degraded: 'uuid[]',
} as const;

/** Its one row. */
export interface ClaimedSubscriptions {
  /** Where the next walk goes on (null: it reached the last subscription, the next starts again from the first). */
  cursor: string | null;
  /** Candidates with due work that this claim did not lock: the next claim's hints. */
  left_over: string[];
}

/** The earliest due delivery of subscription `s`: one probe of webhook_deliveries_due_idx. */
const FIRST_DUE = `
  SELECT d.next_attempt_at FROM webhook_deliveries d
   WHERE d.subscription_id = s.id AND d.status = 'pending' AND d.next_attempt_at <= now() AND ${UNLEASED}
   ORDER BY d.next_attempt_at LIMIT 1`;

/** The next subscription id after `after` that has a pending delivery: one probe of webhook_deliveries_due_idx. */
const nextWithPending = (after: string) => `SELECT d.subscription_id FROM webhook_deliveries d
   WHERE d.status = 'pending' AND d.subscription_id > ${after} ORDER BY d.subscription_id LIMIT 1`;

/**
 * Locks a few subscriptions that have due work, and passes their ids to the
 * leasing statement in the transaction-local setting
 * switchboard.claim_subscriptions. Fairness: subscriptions are taken in
 * turns per organization (each organization's first, then each one's second,
 * ...), so that one organization's many subscriptions never queue ahead of
 * another organization's fresh delivery. `maxInFlight` is the per-subscription
 * cap, written into the text (a constant the planner reads).
 */
export function claimSubscriptions(maxInFlight: number): NamedStatement<typeof CLAIM_SUBSCRIPTIONS_PARAMETERS> {
  const cap = capOf(maxInFlight);
  return namedStatement(
    `switchboard_claim_subscriptions_${maxInFlight}`,
    CLAIM_SUBSCRIPTIONS_PARAMETERS,
    `WITH RECURSIVE walk (id, step) AS (
  SELECT (${nextWithPending(`coalesce(@cursor, '00000000-0000-0000-0000-000000000000'::uuid)`)}), 1
  UNION ALL
  SELECT (${nextWithPending('walk.id')}), walk.step + 1 FROM walk WHERE walk.id IS NOT NULL AND walk.step < @walk
),
-- Each candidate's row by its id (LIMIT 1: never flattened into a join that
-- reads every subscription and tests each against the candidates).
looked_at AS MATERIALIZED (
  SELECT s.* FROM (SELECT walk.id FROM walk WHERE walk.id IS NOT NULL UNION SELECT unnest(@hints)) looked_at_id
   CROSS JOIN LATERAL (SELECT * FROM webhook_subscriptions s WHERE s.id = looked_at_id.id LIMIT 1) s
   WHERE ${ELIGIBLE}
),
live_grant AS MATERIALIZED (${liveGrants('looked_at')}),
candidate AS MATERIALIZED (
  SELECT c.id, c.next_attempt_at, row_number() OVER (PARTITION BY c.organization_id ORDER BY c.next_attempt_at) AS turn
    FROM (
      SELECT s.id, s.organization_id, due.next_attempt_at, ${DEGRADED} AS degraded
        FROM looked_at s CROSS JOIN LATERAL (${FIRST_DUE}) due
       WHERE (@degradedLimit > 0 OR NOT ${DEGRADED_KNOWN})
         AND s.grant_id IN (SELECT live_grant.grant_id FROM live_grant) AND (${inFlight(maxInFlight)}) < ${cap}
    ) c
   WHERE CASE WHEN c.degraded THEN @degradedLimit > 0 ELSE @limit > 0 END
),
-- Taken in turn order, each only if no other claimer holds it (claim-lock.ts).
-- The lock is a volatile call in the WHERE of an ordered subquery: it is
-- not pushed below the sort, so the LIMIT stops taking locks once enough are held.
chosen AS MATERIALIZED (
  SELECT turns.id
    FROM (SELECT candidate.id FROM candidate ORDER BY candidate.turn, candidate.next_attempt_at) turns
   WHERE ${tryClaimLock('turns.id')}
   LIMIT @maxSubscriptions
),
-- FOR KEY SHARE, in id order as every other locker of several subscriptions:
-- a deletion or a grant's stop (FOR UPDATE) waits for this claim to end, or
-- holds the row and it is skipped here.
locked AS (
  SELECT s.id FROM webhook_subscriptions s
   WHERE s.id IN (SELECT chosen.id FROM chosen)
   ORDER BY s.id
     FOR KEY SHARE OF s SKIP LOCKED
)
SELECT set_config('switchboard.claim_subscriptions', coalesce((SELECT string_agg(locked.id::text, ',') FROM locked), ''), true),
       (SELECT walk.id FROM walk ORDER BY walk.step DESC LIMIT 1) AS cursor,
       ARRAY(SELECT candidate.id FROM candidate WHERE candidate.id NOT IN (SELECT locked.id FROM locked)
              ORDER BY candidate.turn, candidate.next_attempt_at LIMIT @maxSubscriptions) AS left_over`,
  );
}
