-- Indexes behind the delivery-health pages: the home dashboard,
-- the subscription charts, recover, and the calls filters. Each chart reads a
-- bounded time range of one organization or subscription through an index
-- that holds every column the query needs (index-only where the table is
-- insert-mostly), so no page view scans webhook_attempts or calls.
--
-- RLS adds organization_id = app_current_org() to every query of
-- switchboard_app: the indexes carry organization_id so that filter needs no
-- heap visit either.

-- Subscription charts (outcomes per hour / per day, latency p50/p95) and the
-- attempts list: the same key as the index it replaces, plus the columns the
-- charts aggregate, so the charts are index-only scans (attempts are never updated).
DROP INDEX IF EXISTS webhook_attempts_subscription_idx;
CREATE INDEX webhook_attempts_subscription_idx
  ON webhook_attempts (subscription_id, attempted_at DESC, id DESC) INCLUDE (organization_id, outcome, latency_ms);

-- "The last error in words": the newest failed attempt, however long ago, without
-- walking past the successes that followed it.
CREATE INDEX webhook_attempts_subscription_failures_idx
  ON webhook_attempts (subscription_id, attempted_at DESC) WHERE outcome <> 'succeeded' AND outcome <> 'superseded';

-- Dashboard: deliveries of the last 24 hours by their current status.
CREATE INDEX webhook_deliveries_organization_created_idx
  ON webhook_deliveries (organization_id, created_at) INCLUDE (status);

-- Recover: a subscription's failed deliveries since a time, oldest first.
CREATE INDEX webhook_deliveries_failed_idx
  ON webhook_deliveries (subscription_id, created_at, id) WHERE status = 'failed';

-- Calls page filtered by agent (date range and status ride on calls_organization_created_idx).
CREATE INDEX calls_organization_agent_created_idx
  ON calls (organization_id, agent_id, created_at DESC, id DESC) WHERE agent_id IS NOT NULL;

-- Sealed aggregates for the charts. A day (calls) or an hour (attempts) that
-- ended more than a grace period ago no longer changes, so its count is
-- computed once, when a page first needs it, and read from here afterwards:
-- a page view counts raw rows only for the open window (the current hour or
-- day plus the grace period). Nothing on the write path (call creation,
-- delivery recording) touches these tables. Rows hold zeros too, so a quiet
-- hour is not recounted on every view.
CREATE TABLE calls_per_day (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  day             date NOT NULL,
  calls           integer NOT NULL CHECK (calls >= 0),
  PRIMARY KEY (organization_id, day)
);

CREATE TABLE webhook_attempts_per_hour (
  organization_id uuid NOT NULL,
  subscription_id uuid NOT NULL,
  hour            timestamptz NOT NULL,
  succeeded       integer NOT NULL CHECK (succeeded >= 0),
  retrying        integer NOT NULL CHECK (retrying >= 0),
  failed          integer NOT NULL CHECK (failed >= 0),
  PRIMARY KEY (subscription_id, hour),
  CONSTRAINT webhook_attempts_per_hour_subscription_fkey FOREIGN KEY (organization_id, subscription_id)
    REFERENCES webhook_subscriptions (organization_id, id) ON DELETE CASCADE
);
-- Retention removes hours older than the delivery log.
CREATE INDEX webhook_attempts_per_hour_hour_idx ON webhook_attempts_per_hour (hour);

ALTER TABLE calls_per_day ENABLE ROW LEVEL SECURITY;
CREATE POLICY calls_per_day_tenant ON calls_per_day
  USING (organization_id = app_current_org()) WITH CHECK (organization_id = app_current_org());
GRANT SELECT, INSERT ON calls_per_day TO switchboard_app;

ALTER TABLE webhook_attempts_per_hour ENABLE ROW LEVEL SECURITY;
CREATE POLICY webhook_attempts_per_hour_tenant ON webhook_attempts_per_hour
  USING (organization_id = app_current_org()) WITH CHECK (organization_id = app_current_org());
GRANT SELECT, INSERT ON webhook_attempts_per_hour TO switchboard_app;
