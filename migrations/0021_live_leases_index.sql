-- Live leases per subscription, in lease-expiry order. The claim counts a
-- subscription's live leases (up to the cap) on every claim. Released leases
-- leave their old row versions' entries in the index on leased rows until
-- vacuum, and a bitmap scan (the planner's choice for the old count) visits
-- each of them in the heap again on every claim: hundreds of pages per claim
-- on a busy subscription. Walking this index in expiry order, newest first,
-- with the cap as LIMIT is a plain index scan, which stops at the cap, skips
-- expired leases in the index itself, and marks the entries of dead row
-- versions as it passes them so later claims skip them without a heap visit.
CREATE INDEX webhook_deliveries_live_leases_idx
  ON webhook_deliveries (subscription_id, lease_expires_at) WHERE lease_token IS NOT NULL;
DROP INDEX IF EXISTS webhook_deliveries_leased_subscription_idx;
