-- Which rule keys a subscription's webhook-signature (docs/interface.md §6.2):
-- 'plain', the secret's own UTF-8 bytes, or 'whsec', the base64 decoding of
-- what follows `whsec_` (the Standard Webhooks form, so its libraries verify
-- with the secret exactly as given). Every subscription made before this
-- migration keeps 'plain', whatever its secret looks like: its receiver
-- verifies today's way. The default is also what a 0.1.0 process, which knows
-- only that rule, writes while both run during a rolling restart; this
-- release always names the rule. Without a secret the column is unused.
ALTER TABLE webhook_subscriptions
  ADD COLUMN secret_format text NOT NULL DEFAULT 'plain'
    CONSTRAINT webhook_subscriptions_secret_format_check CHECK (secret_format IN ('plain', 'whsec'));
