-- The claim reads due work per subscription through webhook_deliveries_due_idx
-- (subscription_id, next_attempt_at, partial on pending) and live leases
-- through webhook_deliveries_leased_subscription_idx; "when to look again"
-- uses the same two (docs/performance.md, delivery). The two indexes below
-- served the former whole-queue queries only. Dropping them saves two index
-- insertions on every claim and release (each one a new row version), and
-- keeps the planner from walking the global next-due order for a
-- subscription that has no work.
DROP INDEX IF EXISTS webhook_deliveries_next_due_idx;
DROP INDEX IF EXISTS webhook_deliveries_leased_idx;
