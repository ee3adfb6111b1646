-- Calls and agents, call.completed subscriptions, the delivery outbox (which
-- is also the work queue) and the log of every delivery attempt
-- (docs/interface.md §6.4, §12 and §13).
--
-- Tenant isolation: every table carries organization_id with a row-level
-- policy for switchboard_app. The delivery worker is a system process and runs
-- as the owner role. Deliveries and attempts reference their subscription and
-- call through composite (organization_id, id) keys, so the database itself
-- refuses a delivery of one organization's call to another's subscription.

CREATE TABLE agents (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name            text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  created_at      timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT agents_organization_id_id_key UNIQUE (organization_id, id)
);

CREATE TABLE calls (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id  uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  agent_id         uuid,
  status           text NOT NULL DEFAULT 'in_progress' CHECK (status IN ('in_progress', 'completed')),
  created_at       timestamptz NOT NULL DEFAULT now(),
  completed_at     timestamptz,
  duration_seconds integer CHECK (duration_seconds >= 0),
  summary          text CHECK (length(summary) BETWEEN 1 AND 10000),
  CONSTRAINT calls_organization_id_id_key UNIQUE (organization_id, id),
  -- The agent must belong to the call's organization (MATCH SIMPLE: no agent is fine).
  CONSTRAINT calls_agent_fkey FOREIGN KEY (organization_id, agent_id) REFERENCES agents (organization_id, id),
  CONSTRAINT calls_completed_check CHECK (
    (status = 'completed') = (completed_at IS NOT NULL AND summary IS NOT NULL AND duration_seconds IS NOT NULL)
  )
);
CREATE INDEX calls_organization_created_idx ON calls (organization_id, created_at DESC, id DESC);
CREATE INDEX calls_organization_completed_idx ON calls (organization_id, created_at DESC, id DESC) WHERE status = 'completed';

CREATE TABLE webhook_subscriptions (
  id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id   uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  -- The OAuth client (its public client_id) that subscribed; removing the client removes its hooks.
  client_id         text NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
  event             text NOT NULL CHECK (event IN ('call.completed')),
  callback_url      text NOT NULL CHECK (length(callback_url) BETWEEN 1 AND 2048),
  -- AES-256-GCM under SECRET_KEY (src/webhooks/secret-box.ts); NULL when no secret was given.
  secret_ciphertext bytea,
  status            text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  -- First failed attempt since the last success; five days of only failures disables the hook.
  failing_since     timestamptz,
  disabled_at       timestamptz,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT webhook_subscriptions_organization_id_id_key UNIQUE (organization_id, id),
  CONSTRAINT webhook_subscriptions_disabled_check CHECK ((status = 'disabled') = (disabled_at IS NOT NULL))
);
-- One subscription per organization, client, event and exact URL. The URL is
-- hashed because a 2048-character URL may not fit in a btree entry.
CREATE UNIQUE INDEX webhook_subscriptions_target_key
  ON webhook_subscriptions (organization_id, client_id, event, md5(callback_url));
CREATE INDEX webhook_subscriptions_client_id_idx ON webhook_subscriptions (client_id);

-- The transactional outbox and the work queue in one table: one row per
-- (subscription, call), written in the transaction that completes the call.
-- Its id is the X-Delivery-Id / webhook-id, stable across retries.
CREATE TABLE webhook_deliveries (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id  uuid NOT NULL,
  subscription_id  uuid NOT NULL,
  call_id          uuid NOT NULL,
  event            text NOT NULL,
  -- The exact request body, fixed when the call completed: every retry sends the same bytes.
  body             text NOT NULL,
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  -- Attempts started so far; the next claim sends X-Delivery-Attempt = attempts + 1.
  attempts         integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  -- Attempts already made when the current retry schedule began (a redelivery restarts it).
  schedule_start   integer NOT NULL DEFAULT 0 CHECK (schedule_start >= 0),
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  -- When the latest attempt was claimed (the start time a lost attempt is logged with).
  last_attempt_at  timestamptz,
  -- A worker's claim: only the holder of lease_token may record the outcome,
  -- and an expired lease may be claimed again by any worker.
  lease_token      uuid,
  lease_expires_at timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  finished_at      timestamptz,
  CONSTRAINT webhook_deliveries_organization_id_id_key UNIQUE (organization_id, id),
  CONSTRAINT webhook_deliveries_subscription_call_key UNIQUE (subscription_id, call_id),
  CONSTRAINT webhook_deliveries_subscription_fkey FOREIGN KEY (organization_id, subscription_id)
    REFERENCES webhook_subscriptions (organization_id, id) ON DELETE CASCADE,
  CONSTRAINT webhook_deliveries_call_fkey FOREIGN KEY (organization_id, call_id)
    REFERENCES calls (organization_id, id) ON DELETE CASCADE,
  CONSTRAINT webhook_deliveries_lease_check CHECK (
    (lease_token IS NULL) = (lease_expires_at IS NULL) AND (lease_token IS NULL OR status = 'pending')
  )
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (subscription_id, next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_next_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending' AND lease_token IS NULL;
CREATE INDEX webhook_deliveries_leased_idx ON webhook_deliveries (lease_expires_at) WHERE lease_token IS NOT NULL;
CREATE INDEX webhook_deliveries_leased_subscription_idx ON webhook_deliveries (subscription_id) WHERE lease_token IS NOT NULL;
CREATE INDEX webhook_deliveries_call_id_idx ON webhook_deliveries (call_id);
CREATE INDEX webhook_deliveries_finished_at_idx ON webhook_deliveries (finished_at) WHERE finished_at IS NOT NULL;

-- Every attempt, as it happened on the wire (or as far as we know: a worker
-- that died mid-attempt leaves a 'lease_expired' row written by the next claim).
CREATE TABLE webhook_attempts (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL,
  delivery_id     uuid NOT NULL,
  subscription_id uuid NOT NULL,
  attempt         integer NOT NULL CHECK (attempt >= 1),
  attempted_at    timestamptz NOT NULL,
  status_code     integer,
  latency_ms      integer,
  error           text CHECK (error IN ('timeout', 'connection', 'tls', 'blocked_address', 'invalid_url', 'lease_expired', 'internal')),
  error_message   text,
  -- The first 4 KiB of the answer.
  response_body   text,
  outcome         text NOT NULL CHECK (outcome IN ('succeeded', 'retrying', 'failed', 'subscription_removed', 'superseded')),
  CONSTRAINT webhook_attempts_delivery_attempt_key UNIQUE (delivery_id, attempt),
  CONSTRAINT webhook_attempts_delivery_fkey FOREIGN KEY (organization_id, delivery_id)
    REFERENCES webhook_deliveries (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX webhook_attempts_subscription_idx ON webhook_attempts (subscription_id, attempted_at DESC, id DESC);
CREATE INDEX webhook_attempts_attempted_at_idx ON webhook_attempts (attempted_at);

ALTER TABLE agents ENABLE ROW LEVEL SECURITY;
CREATE POLICY agents_tenant ON agents
  USING (organization_id = app_current_org()) WITH CHECK (organization_id = app_current_org());
GRANT SELECT, INSERT ON agents TO switchboard_app;

ALTER TABLE calls ENABLE ROW LEVEL SECURITY;
CREATE POLICY calls_tenant ON calls
  USING (organization_id = app_current_org()) WITH CHECK (organization_id = app_current_org());
GRANT SELECT, INSERT, UPDATE ON calls TO switchboard_app;

ALTER TABLE webhook_subscriptions ENABLE ROW LEVEL SECURITY;
CREATE POLICY webhook_subscriptions_tenant ON webhook_subscriptions
  USING (organization_id = app_current_org()) WITH CHECK (organization_id = app_current_org());
GRANT SELECT, INSERT, UPDATE, DELETE ON webhook_subscriptions TO switchboard_app;

ALTER TABLE webhook_deliveries ENABLE ROW LEVEL SECURITY;
CREATE POLICY webhook_deliveries_tenant ON webhook_deliveries
  USING (organization_id = app_current_org()) WITH CHECK (organization_id = app_current_org());
GRANT SELECT, INSERT, UPDATE ON webhook_deliveries TO switchboard_app;

ALTER TABLE webhook_attempts ENABLE ROW LEVEL SECURITY;
CREATE POLICY webhook_attempts_tenant ON webhook_attempts
  USING (organization_id = app_current_org()) WITH CHECK (organization_id = app_current_org());
GRANT SELECT ON webhook_attempts TO switchboard_app;
