// The tests both claim statements make of a subscription and its deliveries
// (claim-subscriptions.queries.ts, claim-leases.queries.ts): written once here,
// as SQL fragments over `s` (a webhook_subscriptions row) and `d` (a
// webhook_deliveries row), with the claim's named parameters (@degraded, @leaseMs,
// @slowMs). The only value written into them is the per-subscription cap, an
// integer claim.queries.ts checks: the planner must read it (claim-plan.test.ts).

/**
 * A subscription the claim may take deliveries of: active, and its circuit
 * closed or its wait over (then one probe at a time: capOf).
 */
export const ELIGIBLE = `s.status = 'active' AND (s.circuit_state = 'closed' OR s.circuit_retry_at <= now())`;

/**
 * The grants of the subscriptions in `rows` that are live
 * (oauth_grant_status.live, the test the token check and the outbox share): a
 * subscription may be delivered to only while its grant is.
 * Each grant is tested once per statement (an organization's subscriptions
 * often share one), by a probe (LIMIT 1): as EXISTS beside the
 * subscriptions, a plan made on a young table joined from the grants' side,
 * testing every subscription of every live grant on each claim.
 */
export const liveGrants = (rows: string): string => `SELECT row_grant.grant_id FROM (SELECT DISTINCT r.grant_id FROM ${rows} r) row_grant
   WHERE (SELECT true FROM oauth_grant_status g
           WHERE g.grant_id = row_grant.grant_id AND g.live LIMIT 1) IS NOT NULL`;

/**
 * Delivery `d` has no lease, or one that ran out: one probe of the leases'
 * primary key (a lease is a row of its own).
 */
export const UNLEASED = `coalesce((SELECT l.expires_at <= now() FROM webhook_delivery_leases l WHERE l.delivery_id = d.id), true)`;

/** Attempts of subscription `s` allowed in flight now: its adaptive limit, one while its circuit is open. */
export const capOf = (maxInFlight: number): string =>
  `(CASE WHEN s.circuit_state = 'open' THEN 1 ELSE least(coalesce(s.concurrency_limit, ${maxInFlight}), ${maxInFlight}) END)`;

/**
 * Live leases of subscription `s`, counted up to the cap (all a claim needs
 * to know), on webhook_delivery_leases_subscription_idx (subscription,
 * expiry). The expiry range leaves out leases that ran out, and the entries
 * that released leases leave behind until vacuum are visited only for the
 * last lease period, not since the last vacuum.
 */
export const inFlight = (maxInFlight: number): string => `
  SELECT count(*) FROM (SELECT FROM webhook_delivery_leases l
   WHERE l.subscription_id = s.id AND l.expires_at > now()
   ORDER BY l.expires_at DESC LIMIT ${maxInFlight}) live`;

/**
 * Degraded by its recorded health (never answered yet, circuit open, failing
 * or its last answer slow), or by the worker's own attempts holding degraded
 * slots (@degraded; a test of its row and the worker's list only: no index
 * probe).
 */
export const DEGRADED_KNOWN = `(NOT s.answered OR s.circuit_state = 'open' OR s.consecutive_failures > 0 OR s.slow OR s.id = ANY (@degraded))`;

/**
 * Degraded: known so, or another worker has had an attempt of it in flight
 * for longer than @slowMs (its lease's age; one probe of the live-leases
 * index). Such endpoints share the worker's degraded slots.
 */
export const DEGRADED = `(${DEGRADED_KNOWN} OR (
    SELECT true FROM webhook_delivery_leases l
     WHERE l.subscription_id = s.id AND l.expires_at > now()
       AND l.expires_at <= now() + (@leaseMs - @slowMs) * interval '1 millisecond'
     -- A LIMIT keeps it one probe per subscription: as EXISTS it was planned as one scan of every live lease.
     LIMIT 1) IS NOT NULL)`;
