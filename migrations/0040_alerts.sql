-- E-mail alerts to an organization's owners and admins (src/alerts/).
--
-- alerts: one row per thing worth telling (an incident that has lasted
-- ALERT_AFTER, its end, a disable, deliveries failing for good, a revoked
-- connection). dedupe_key makes the rule that found it idempotent across any
-- number of workers: a second worker's insert of the same alert does nothing.
CREATE TABLE alerts (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('incident', 'recovered', 'disabled', 'failing', 'revoked')),
  subject_type text NOT NULL CHECK (subject_type IN ('subscription', 'client')),
  subject_id text NOT NULL CHECK (length(subject_id) BETWEEN 1 AND 200),
  dedupe_key text NOT NULL CHECK (length(dedupe_key) BETWEEN 1 AND 300),
  -- What the e-mail says: the app's name, the receiver's URL, since when, how many deliveries wait.
  details jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- When its alert.sent event was written: once every recipient's e-mail has ended (sent or given up).
  recorded_at timestamptz,
  CONSTRAINT alerts_pkey PRIMARY KEY (id),
  CONSTRAINT alerts_dedupe_key UNIQUE (organization_id, dedupe_key)
);
CREATE INDEX alerts_unrecorded_idx ON alerts (created_at) WHERE recorded_at IS NULL;
-- The 404 rule's "at most one a day for this subscription"; retention.
CREATE INDEX alerts_subject_idx ON alerts (organization_id, subject_id, created_at);
CREATE INDEX alerts_recorded_at_idx ON alerts (recorded_at) WHERE recorded_at IS NOT NULL;

-- The outbox: one e-mail per alert and recipient (the primary key), however
-- many workers send. A sender claims due rows FOR UPDATE SKIP LOCKED and moves
-- next_attempt_at past its lease in the same statement; a sender that dies
-- after the SMTP server accepted the message but before status = 'sent' leaves
-- the row to come due again once, and no other sender takes a claimed row.
CREATE TABLE alert_emails (
  alert_id uuid NOT NULL REFERENCES alerts(id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  email text NOT NULL,
  status text NOT NULL DEFAULT 'waiting' CHECK (status IN ('waiting', 'sent', 'failed', 'cancelled')),
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  claim_token uuid,
  last_error text CHECK (length(last_error) <= 1000),
  smtp_response text CHECK (length(smtp_response) <= 1000),
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  CONSTRAINT alert_emails_pkey PRIMARY KEY (alert_id, user_id),
  CONSTRAINT alert_emails_finished_check CHECK ((status = 'waiting') = (finished_at IS NULL))
);
CREATE INDEX alert_emails_due_idx ON alert_emails (next_attempt_at) WHERE status = 'waiting';
CREATE INDEX alert_emails_user_id_idx ON alert_emails (user_id);
CREATE INDEX alert_emails_finished_at_idx ON alert_emails (finished_at) WHERE finished_at IS NOT NULL;

-- Each owner or admin may turn alerts off (and on again) for themselves in one
-- organization; no row means on. Goes with the membership.
CREATE TABLE alert_preferences (
  organization_id uuid NOT NULL,
  user_id uuid NOT NULL,
  enabled boolean NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT alert_preferences_pkey PRIMARY KEY (organization_id, user_id),
  CONSTRAINT alert_preferences_membership_fkey FOREIGN KEY (organization_id, user_id)
    REFERENCES memberships(organization_id, user_id) ON DELETE CASCADE
);

-- Where each alert rule's last look ended (src/alerts/rules.ts). The row is
-- also the rule's lock: a worker takes it FOR UPDATE SKIP LOCKED for its
-- look, so one worker at a time applies a rule and another skips that round.
-- System data, no organization's: the owner alone reads it.
CREATE TABLE alert_scans (
  rule text NOT NULL,
  scanned_until timestamptz NOT NULL,
  CONSTRAINT alert_scans_pkey PRIMARY KEY (rule)
);
INSERT INTO alert_scans (rule, scanned_until)
  VALUES ('failing', now()), ('incidents', now()), ('events', now());

-- Deliveries failing for good (src/alerts/rules.queries.ts, the 404 rule):
-- per subscription, those that failed since the rule's last look. Only failed
-- rows enter it, so the delivery hot path (pending, succeeded) never writes it.
CREATE INDEX webhook_deliveries_failed_finished_idx ON webhook_deliveries (subscription_id, finished_at)
  WHERE status = 'failed';

-- Tenant tables, like the others: forced row-level security, the tenant
-- policy for switchboard_app, the owner's system work (the alert sender)
-- through a named policy.
ALTER TABLE alerts ENABLE ROW LEVEL SECURITY;
ALTER TABLE alerts FORCE ROW LEVEL SECURITY;
CREATE POLICY alerts_tenant ON alerts
  USING (organization_id = app_current_org()) WITH CHECK (organization_id = app_current_org());
ALTER TABLE alert_emails ENABLE ROW LEVEL SECURITY;
ALTER TABLE alert_emails FORCE ROW LEVEL SECURITY;
CREATE POLICY alert_emails_tenant ON alert_emails
  USING (organization_id = app_current_org()) WITH CHECK (organization_id = app_current_org());
ALTER TABLE alert_preferences ENABLE ROW LEVEL SECURITY;
ALTER TABLE alert_preferences FORCE ROW LEVEL SECURITY;
CREATE POLICY alert_preferences_tenant ON alert_preferences
  USING (organization_id = app_current_org()) WITH CHECK (organization_id = app_current_org());
-- The web UI reads and writes a user's own preference inside the organization.
GRANT SELECT, INSERT, UPDATE ON alert_preferences TO switchboard_app;
DO $$
BEGIN
  EXECUTE format('CREATE POLICY alerts_owner ON alerts TO %I USING (true) WITH CHECK (true)', current_user);
  EXECUTE format('CREATE POLICY alert_emails_owner ON alert_emails TO %I USING (true) WITH CHECK (true)', current_user);
  EXECUTE format('CREATE POLICY alert_preferences_owner ON alert_preferences TO %I USING (true) WITH CHECK (true)', current_user);
END
$$;
