-- Whether a subscription's endpoint has ever answered in time (any status but
-- 429 and 5xx, slow answers included). Until it has, its attempts count as
-- degraded and share the slow slots (src/webhooks/worker/endpoint-health.ts):
-- an organization's hundreds of new subscriptions whose endpoints hang can
-- otherwise each take a healthy slot until their first attempt times out.
ALTER TABLE webhook_subscriptions ADD COLUMN answered boolean NOT NULL DEFAULT false;

-- Subscriptions that exist when this runs keep the standing they had: healthy
-- unless their recorded health says otherwise.
UPDATE webhook_subscriptions SET answered = true;
