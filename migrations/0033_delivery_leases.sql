-- A delivery's lease lives in a row of its own, not in the delivery's row.
--
-- Leasing by updating the delivery wrote a new version of a wide row with
-- an entry in each of its eight indexes, for every delivery a claim took
-- (2 to 3.5 ms of a 64-delivery claim among 1,000,000 rows, bench:claim).
-- A lease is now an insert of a narrow row with three index entries, into a
-- table that holds only the attempts in flight; the delivery's row is written
-- when the attempt's outcome is recorded, as it already was.
--
-- While a lease row exists, its attempt is the delivery's attempts + 1 (the
-- attempt in flight, or lost if the lease ran out); webhook_deliveries.attempts
-- counts the attempts that have ended (recorded, handed back, or lost and
-- logged). Every writer takes the delivery's row before its lease's: a
-- claim locks the delivery, then writes the lease; recording an outcome,
-- handing a lease back and stopping a grant's subscriptions update the
-- delivery, then delete the lease. A claim that takes over a lease that ran
-- out updates the delivery too (the lost attempt is counted), so a late
-- record of the lost attempt finds the delivery changed and is superseded.
CREATE TABLE webhook_delivery_leases (
  delivery_id     uuid PRIMARY KEY,
  organization_id uuid NOT NULL,
  subscription_id uuid NOT NULL,
  -- Only the holder of the token may record the attempt's outcome.
  token           uuid NOT NULL,
  -- This attempt's number (X-Delivery-Attempt), and when it was claimed.
  attempt         integer NOT NULL CHECK (attempt > 0),
  started_at      timestamptz NOT NULL,
  -- After this, any worker may take the delivery over (its worker stopped or stalled).
  expires_at      timestamptz NOT NULL
);
-- A lease goes with its delivery. Not a foreign key: its check is a query
-- per inserted row (0.8 ms of a 64-delivery claim, 13 µs a lease), and the
-- claim inserts leases only for deliveries it holds locked. A deletion
-- waits for that lock, and this trigger, run after every statement that
-- deletes deliveries (directly, or cascading from a subscription or a call),
-- removes their leases.
-- (As the owner: a tenant's deletion removes its deliveries' leases whoever may read them.)
CREATE FUNCTION webhook_delivery_leases_follow_deletes() RETURNS trigger
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public
  AS $$
BEGIN
  DELETE FROM webhook_delivery_leases l USING deleted_deliveries d WHERE l.delivery_id = d.id;
  RETURN NULL;
END
$$;
CREATE TRIGGER webhook_delivery_leases_follow_deletes
  AFTER DELETE ON webhook_deliveries REFERENCING OLD TABLE AS deleted_deliveries
  FOR EACH STATEMENT EXECUTE FUNCTION webhook_delivery_leases_follow_deletes();
-- A subscription's leases by expiry: its attempts in flight (counted up to its
-- cap) and the age of the oldest (a slow endpoint), on every claim.
CREATE INDEX webhook_delivery_leases_subscription_idx ON webhook_delivery_leases (subscription_id, expires_at);
-- The first lease to run out: when the claim must look again. Its
-- predicate (true of every lease) is named by that read alone, so no
-- per-subscription probe can use this index: planned while the table held
-- no live lease (its statistics after a quiet spell), they walked it
-- backwards over every lease and filtered on the subscription (13 ms a claim
-- with 1,300 leases in flight, bench:claim).
CREATE INDEX webhook_delivery_leases_expires_idx ON webhook_delivery_leases (expires_at) WHERE attempt > 0;

INSERT INTO webhook_delivery_leases (delivery_id, organization_id, subscription_id, token, attempt, started_at, expires_at)
SELECT id, organization_id, subscription_id, lease_token, attempts, coalesce(last_attempt_at, now()), lease_expires_at
  FROM webhook_deliveries WHERE lease_token IS NOT NULL;
UPDATE webhook_deliveries SET attempts = attempts - 1 WHERE lease_token IS NOT NULL;

-- Dropping the columns drops the indexes and the check that name them
-- (live leases, lease ends, retry due, webhook_deliveries_lease_check).
ALTER TABLE webhook_deliveries DROP COLUMN lease_token, DROP COLUMN lease_expires_at, DROP COLUMN last_attempt_at;

-- Retries scheduled later (the claim's next-due read). A leased delivery is
-- due already (its next_attempt_at is past), so the read's range leaves it
-- out without naming the lease; a fresh delivery (no attempt yet) is
-- announced by NOTIFY and never enters the index.
CREATE INDEX webhook_deliveries_retry_due_idx ON webhook_deliveries (next_attempt_at)
  WHERE status = 'pending' AND attempts > 0;

-- Tenants read whether a delivery is in flight; stopping a grant's
-- subscriptions (run as the caller, inside its organization) drops leases.
ALTER TABLE webhook_delivery_leases ENABLE ROW LEVEL SECURITY;
ALTER TABLE webhook_delivery_leases FORCE ROW LEVEL SECURITY;
CREATE POLICY webhook_delivery_leases_tenant ON webhook_delivery_leases
  USING (organization_id = app_current_org()) WITH CHECK (organization_id = app_current_org());
GRANT SELECT, DELETE ON webhook_delivery_leases TO switchboard_app;
-- The owner's system work (the worker) reaches every row through a named policy, as on the other tenant tables (migration 0007).
DO $$
BEGIN
  EXECUTE format('CREATE POLICY webhook_delivery_leases_owner ON webhook_delivery_leases TO %I USING (true) WITH CHECK (true)', current_user);
END
$$;

-- As in migration 0025, with the leases in their own table: the deliveries
-- (failed) before their leases, the order every writer takes them in. An
-- attempt already on the wire records as superseded.
CREATE OR REPLACE FUNCTION webhooks_stop_for_grants(grant_ids uuid[], reason text) RETURNS void
  LANGUAGE sql
  AS $$
  SELECT count(*) FROM (
    SELECT 1 FROM webhook_subscriptions WHERE grant_id = ANY (grant_ids) ORDER BY id FOR UPDATE
  ) locked;
  UPDATE webhook_deliveries d
     SET status = 'failed', attempts = coalesce((SELECT l.attempt FROM webhook_delivery_leases l WHERE l.delivery_id = d.id), d.attempts),
         finished_at = now(), updated_at = now()
    FROM webhook_subscriptions s
   WHERE s.grant_id = ANY (grant_ids) AND d.subscription_id = s.id AND d.status = 'pending';
  DELETE FROM webhook_delivery_leases l
   USING webhook_subscriptions s
   WHERE s.grant_id = ANY (grant_ids) AND l.subscription_id = s.id;
  UPDATE webhook_subscriptions
     SET status = 'disabled', disabled_at = coalesce(disabled_at, now()), disabled_reason = reason, updated_at = now()
   WHERE grant_id = ANY (grant_ids) AND disabled_reason IS DISTINCT FROM reason;
$$;
REVOKE ALL ON FUNCTION webhooks_stop_for_grants(uuid[], text) FROM PUBLIC;
