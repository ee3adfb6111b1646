-- Stopping a grant's subscriptions (migration 0007) locks them first, FOR
-- UPDATE in id order, then fails their pending deliveries, then disables them.
--
-- Subscriptions before deliveries is the order every other writer takes:
-- a deletion (the subscription, then ON DELETE CASCADE), a claim (FOR NO KEY
-- UPDATE, then the leases), recording outcomes (FOR KEY SHARE in id order,
-- then the deliveries), recover (FOR SHARE) and redeliver (FOR KEY SHARE),
-- then the deliveries. Failing the deliveries first, a stop waited for the
-- subscription that a claim held while the claim waited for a delivery the
-- stop had updated: a deadlock.
--
-- FOR UPDATE (not the FOR NO KEY UPDATE the disabling UPDATE needs) is the
-- lock that conflicts with the outbox's FOR KEY SHARE: a call completing
-- beside a stop either locked the subscription first (the stop then waits
-- for it, and its deliveries, committed by then, are failed with the rest)
-- or skips the subscription (SKIP LOCKED, or READ COMMITTED's re-check of the
-- disabled row once the stop has committed). Read without it, a delivery
-- inserted by a call whose statement began before the stop committed stayed
-- pending on the disabled subscription, and was sent once the platform
-- subscribed again under a new grant.
CREATE OR REPLACE FUNCTION webhooks_stop_for_grants(grant_ids uuid[], reason text) RETURNS void
  LANGUAGE sql
  AS $$
  SELECT count(*) FROM (
    SELECT 1 FROM webhook_subscriptions WHERE grant_id = ANY (grant_ids) ORDER BY id FOR UPDATE
  ) locked;
  UPDATE webhook_deliveries d
     SET status = 'failed', lease_token = NULL, lease_expires_at = NULL, finished_at = now(), updated_at = now()
    FROM webhook_subscriptions s
   WHERE s.grant_id = ANY (grant_ids) AND d.subscription_id = s.id AND d.status = 'pending';
  UPDATE webhook_subscriptions
     SET status = 'disabled', disabled_at = coalesce(disabled_at, now()), disabled_reason = reason, updated_at = now()
   WHERE grant_id = ANY (grant_ids) AND disabled_reason IS DISTINCT FROM reason;
$$;
REVOKE ALL ON FUNCTION webhooks_stop_for_grants(uuid[], text) FROM PUBLIC;
