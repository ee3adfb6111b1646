-- The claim's next-due read (src/webhooks/worker/claim.queries.ts, NEXT_DUE)
-- finds the first lease to run out as the first entry of an index ordered by
-- lease expiry. Its plan is made once per connection, often while the table
-- is young; the index of migration 0022 (partial on pending, leased rows)
-- shared its query's `status = 'pending'` with webhook_deliveries_due_idx,
-- and a plan made on a young table sorted every pending delivery through
-- that index instead, after every claim. This index's predicate names the
-- lease expiry only (a lease is held only on a pending delivery: the table's
-- webhook_deliveries_lease_check), so the read has no other index to choose.
CREATE INDEX webhook_deliveries_lease_ends_idx ON webhook_deliveries (lease_expires_at)
  WHERE lease_expires_at IS NOT NULL;
DROP INDEX IF EXISTS webhook_deliveries_lease_expiry_idx;
