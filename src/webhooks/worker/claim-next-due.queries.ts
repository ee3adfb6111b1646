// The claim's third statement, claim_next_due (claim.queries.ts runs it, in
// its second message, beside the COMMIT; docs/delivery-engine.md, "One round of the worker").
import { namedStatement } from '../../db/named-statement.ts';

/**
 * claim_next_due: when to look again for work that is not due yet (work due
 * now is found by the candidates: the hints and the walk): the first retry,
 * the first open circuit's end of wait and the first lease to run out, one
 * probe of an index each, whatever the tables hold. Each is written as the
 * first row in the index's order (ORDER BY ... LIMIT 1), and the lease source
 * names its index's predicate (webhook_delivery_leases_ends_idx): its plan is
 * made once per connection, often on a young table, and as min() over rows
 * the planner then guessed at one, each read every entry of its index, or
 * sorted every pending delivery (claim-plan.test.ts). Rows of subscriptions
 * that are not active are not left out (that would cost a probe per
 * subscription): an early look costs one claim.
 */
export const CLAIM_NEXT_DUE = namedStatement(
  'switchboard_claim_next_due',
  {},
  `SELECT least(
    (SELECT d.next_attempt_at FROM webhook_deliveries d
      WHERE d.status = 'pending' AND d.attempts > 0 AND d.next_attempt_at > now()
      ORDER BY d.next_attempt_at LIMIT 1),
    (SELECT s.circuit_retry_at FROM webhook_subscriptions s WHERE s.circuit_state = 'open' AND s.circuit_retry_at > now()
      ORDER BY s.circuit_retry_at LIMIT 1),
    (SELECT l.expires_at FROM webhook_delivery_leases l WHERE l.attempt > 0 ORDER BY l.expires_at LIMIT 1)) AS at`,
);

/** claim_next_due's one row. */
export interface NextDue {
  at: Date | null;
}
