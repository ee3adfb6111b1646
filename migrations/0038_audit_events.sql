-- The audit log (issue 32): who changed what in an organization, and what the
-- system did on its own. One row per event, written in the same transaction
-- as the change it records (a rolled-back change leaves none), always through
-- app_audit_event, the one writer: TypeScript statements call it, and so do
-- the triggers below, which record what SQL functions and the delivery engine
-- change (webhooks_stop_for_grants, record_outcomes).
--
-- Append-only for the request role: INSERT and SELECT only, no UPDATE or
-- DELETE; the maintenance task (owner) removes rows older than
-- AUDIT_RETENTION in batches. Organizations are never deleted (deactivated),
-- so the foreign key's cascade only keeps a test's cleanup simple.
CREATE TABLE audit_events (
  id              uuid NOT NULL DEFAULT gen_random_uuid(),
  organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  -- clock_timestamp, not now(): the events of one transaction (a grant
  -- revoked, then its subscriptions disabled) read in the order they happened.
  occurred_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
  type            text NOT NULL CHECK (type IN (
                    'grant.created', 'grant.revoked',
                    'subscription.created', 'subscription.enabled', 'subscription.deleted', 'subscription.disabled',
                    'circuit.opened', 'circuit.closed',
                    'deliveries.recovered', 'delivery.redelivered',
                    'alert.sent')),
  actor_type      text NOT NULL CHECK (actor_type IN ('user', 'client', 'system')),
  -- A user's id, a client's client_id; none for the system.
  actor_id        text,
  -- A user's e-mail, a client's name, or which part of the system.
  actor_label     text NOT NULL CHECK (length(actor_label) BETWEEN 1 AND 254),
  subject_type    text NOT NULL CHECK (subject_type IN ('client', 'subscription', 'delivery')),
  -- A client's client_id, a subscription's or a delivery's id.
  subject_id      text NOT NULL CHECK (length(subject_id) BETWEEN 1 AND 200),
  reason          text,
  -- What a reader needs (the hook URL, the client's name, counts); never a secret, token or password.
  details         jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(details) = 'object'),
  CONSTRAINT audit_events_pkey PRIMARY KEY (id),
  CONSTRAINT audit_events_actor_check CHECK (
    (actor_type = 'system') = (actor_id IS NULL)
    AND (actor_type <> 'system' OR actor_label IN ('worker', 'maintenance', 'command line'))),
  -- The reasons each type takes; every other type has none.
  CONSTRAINT audit_events_reason_check CHECK (CASE type
    WHEN 'grant.revoked' THEN reason IN ('disconnected', 'revoked', 'code_replay', 'refresh_reuse')
    WHEN 'subscription.deleted' THEN reason IN ('unsubscribed', 'deleted', 'gone', 'client_deleted')
    WHEN 'subscription.disabled' THEN reason IN ('delivery_failures', 'grant_revoked', 'user_deactivated',
                                                 'organization_deactivated', 'membership_removed')
    WHEN 'circuit.closed' THEN reason IN ('recovered', 'reset')
    ELSE reason IS NULL END)
);
-- GET /audit-events: an organization's newest first, the cursor (occurred_at, id).
CREATE INDEX audit_events_organization_idx ON audit_events (organization_id, occurred_at DESC, id DESC);
-- A subscription's page lists its own events; circuit.closed finds its incident's circuit.opened.
CREATE INDEX audit_events_subject_idx ON audit_events (organization_id, subject_id, occurred_at DESC, id DESC);
-- The maintenance task's retention, oldest first across organizations.
CREATE INDEX audit_events_occurred_at_idx ON audit_events (occurred_at);

ALTER TABLE audit_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE audit_events FORCE ROW LEVEL SECURITY;
CREATE POLICY audit_events_tenant ON audit_events
  USING (organization_id = app_current_org()) WITH CHECK (organization_id = app_current_org());
GRANT SELECT, INSERT ON audit_events TO switchboard_app;
DO $$
BEGIN
  EXECUTE format('CREATE POLICY audit_events_owner ON audit_events TO %I USING (true) WITH CHECK (true)', current_user);
END
$$;

-- The one writer: every event is written by this function, so its shape is
-- written once. Runs as its caller, under the caller's row-level security.
CREATE FUNCTION app_audit_event(p_organization_id uuid, p_type text, p_actor_type text, p_actor_id text, p_actor_label text,
                                p_subject_type text, p_subject_id text, p_reason text, p_details jsonb)
 RETURNS uuid
 LANGUAGE sql
AS $function$
  INSERT INTO audit_events (organization_id, type, actor_type, actor_id, actor_label, subject_type, subject_id, reason, details)
  VALUES (p_organization_id, p_type, p_actor_type, p_actor_id, p_actor_label, p_subject_type, p_subject_id, p_reason,
          coalesce(p_details, '{}'::jsonb))
  RETURNING id
$function$;

-- Who the rest of this transaction acts for, for the events triggers write
-- (the triggers cannot see the request). Set by the TypeScript writer first
-- in its transaction (src/audit/actor.ts); a client's label is its name.
CREATE FUNCTION app_audit_act_as(p_type text, p_id text, p_label text)
 RETURNS void
 LANGUAGE sql
AS $function$
  SELECT set_config('app.audit_actor',
    json_build_object('type', p_type, 'id', p_id,
                      'label', coalesce(p_label, (SELECT c.name FROM oauth_clients c WHERE p_type = 'client' AND c.client_id = p_id)))::text,
    true)
$function$;

-- The actor app_audit_act_as set, else the delivery worker: the only writer
-- that changes subscriptions without a request, a command or a task behind it.
CREATE FUNCTION app_audit_actor()
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  SELECT coalesce(nullif(current_setting('app.audit_actor', true), '')::jsonb,
                  '{"type": "system", "id": null, "label": "worker"}'::jsonb)
$function$;

-- A subscription's details in its events: its hook URL and client.
CREATE FUNCTION app_audit_subscription_details(s webhook_subscriptions)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  SELECT jsonb_build_object('hook_url', s.callback_url, 'client_id', s.client_id, 'event', s.event)
$function$;

-- subscription.created, .enabled, .disabled, circuit.opened and .closed, from
-- the row's change, whoever made it: subscribing, re-enabling, a grant's stop
-- (webhooks_stop_for_grants) or the outcome record (record_outcomes). The
-- update trigger's WHEN leaves every other update (the outcome record of a
-- healthy endpoint among them) without a call. An incident is the time from
-- the circuit opening while closed to its closing: openings again after a
-- failed probe leave circuit_state 'open' and write nothing.
CREATE FUNCTION webhook_subscriptions_audit()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
  actor jsonb := app_audit_actor();
  details jsonb := app_audit_subscription_details(NEW);
  opened uuid;
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM app_audit_event(NEW.organization_id, 'subscription.created', actor->>'type', actor->>'id', actor->>'label',
                            'subscription', NEW.id::text, NULL, details);
    RETURN NULL;
  END IF;
  IF OLD.status = 'disabled' AND NEW.status = 'active' THEN
    PERFORM app_audit_event(NEW.organization_id, 'subscription.enabled', actor->>'type', actor->>'id', actor->>'label',
                            'subscription', NEW.id::text, NULL, details);
  ELSIF NEW.status = 'disabled' AND (OLD.status <> 'disabled' OR OLD.disabled_reason IS DISTINCT FROM NEW.disabled_reason) THEN
    PERFORM app_audit_event(NEW.organization_id, 'subscription.disabled', actor->>'type', actor->>'id', actor->>'label',
                            'subscription', NEW.id::text, coalesce(NEW.disabled_reason, 'delivery_failures'), details);
  END IF;
  IF OLD.circuit_state = 'closed' AND NEW.circuit_state = 'open' THEN
    PERFORM app_audit_event(NEW.organization_id, 'circuit.opened', actor->>'type', actor->>'id', actor->>'label',
                            'subscription', NEW.id::text, NULL,
                            details || jsonb_build_object('consecutive_failures', NEW.consecutive_failures,
                                                          'next_probe_at', app_iso_time(NEW.circuit_retry_at)));
  ELSIF OLD.circuit_state = 'open' AND NEW.circuit_state = 'closed' THEN
    SELECT e.id INTO opened FROM audit_events e
     WHERE e.organization_id = NEW.organization_id AND e.subject_id = NEW.id::text AND e.type = 'circuit.opened'
     ORDER BY e.occurred_at DESC, e.id DESC LIMIT 1;
    -- Only the worker records answers; anyone else closing it reset it (re-enabled or subscribed again).
    PERFORM app_audit_event(NEW.organization_id, 'circuit.closed', actor->>'type', actor->>'id', actor->>'label',
                            'subscription', NEW.id::text,
                            CASE WHEN actor->>'type' = 'system' AND actor->>'label' = 'worker' THEN 'recovered' ELSE 'reset' END,
                            details || jsonb_build_object('incident', opened, 'opens', OLD.circuit_opens,
                                                          'opened_at', app_iso_time(OLD.circuit_changed_at)));
  END IF;
  RETURN NULL;
END
$function$;

CREATE TRIGGER webhook_subscriptions_audit_insert AFTER INSERT ON webhook_subscriptions
  FOR EACH ROW EXECUTE FUNCTION webhook_subscriptions_audit();
CREATE TRIGGER webhook_subscriptions_audit_update AFTER UPDATE ON webhook_subscriptions
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.disabled_reason IS DISTINCT FROM NEW.disabled_reason
                     OR OLD.circuit_state IS DISTINCT FROM NEW.circuit_state)
  EXECUTE FUNCTION webhook_subscriptions_audit();

-- grant.created (a user approved a client) and grant.revoked, its reason from
-- the stored one. The actor: the user who approved; for a revocation the
-- actor app_audit_act_as set (a user disconnecting in the web UI), else the
-- client (RFC 7009, a replayed code, a reused refresh token). The actor is then
-- set for the rest of the transaction, so the subscriptions the revocation
-- stops (oauth_grants_stop_webhooks, which fires after this trigger: triggers
-- of one event fire in name order) are disabled by the same actor. Owner
-- rights: grants are written before any organization is entered.
CREATE FUNCTION oauth_grants_audit()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'public'
AS $function$
DECLARE
  client oauth_clients;
  actor jsonb;
BEGIN
  SELECT * INTO client FROM oauth_clients c WHERE c.id = NEW.client_id;
  IF TG_OP = 'INSERT' THEN
    PERFORM app_audit_event(NEW.organization_id, 'grant.created', 'user', NEW.user_id::text,
                            (SELECT u.email FROM users u WHERE u.id = NEW.user_id),
                            'client', client.client_id, NULL,
                            jsonb_build_object('client_name', client.name, 'scopes', to_jsonb(NEW.scopes)));
    RETURN NULL;
  END IF;
  IF NEW.revoked_reason = 'user' AND nullif(current_setting('app.audit_actor', true), '') IS NOT NULL THEN
    actor := app_audit_actor();
  ELSIF NEW.revoked_reason = 'user' THEN
    actor := jsonb_build_object('type', 'user', 'id', NEW.user_id::text, 'label', (SELECT u.email FROM users u WHERE u.id = NEW.user_id));
  ELSE
    actor := jsonb_build_object('type', 'client', 'id', client.client_id, 'label', client.name);
  END IF;
  PERFORM set_config('app.audit_actor', actor::text, true);
  PERFORM app_audit_event(NEW.organization_id, 'grant.revoked', actor->>'type', actor->>'id', actor->>'label',
                          'client', client.client_id,
                          CASE NEW.revoked_reason WHEN 'user' THEN 'disconnected' WHEN 'client_revocation' THEN 'revoked'
                                                  ELSE NEW.revoked_reason END,
                          jsonb_build_object('client_name', client.name, 'user_id', NEW.user_id));
  RETURN NULL;
END
$function$;
REVOKE ALL ON FUNCTION oauth_grants_audit() FROM PUBLIC;

CREATE TRIGGER oauth_grants_audit_insert AFTER INSERT ON oauth_grants
  FOR EACH ROW EXECUTE FUNCTION oauth_grants_audit();
CREATE TRIGGER oauth_grants_audit_revoke AFTER UPDATE OF revoked_at ON oauth_grants
  FOR EACH ROW WHEN (OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL)
  EXECUTE FUNCTION oauth_grants_audit();
