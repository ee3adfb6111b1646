-- Security review fixes (docs/security.md).
--
-- 1. A webhook subscription belongs to the OAuth grant that created it.
--    Only platforms subscribe (docs/interface.md §4.2: /webhooks/subscribe takes the
--    three platform headers), so every subscription has a grant; an
--    x-user-token caller can list, delete and re-enable subscriptions but
--    never create one. When the grant stops standing (revoked on the
--    connected-apps page, by code replay, refresh reuse or the client's own
--    RFC 7009 revocation; its user or organization deactivated; the membership
--    removed) its subscriptions are disabled with a reason, in the same
--    transaction, by the triggers below, and their pending deliveries are
--    dropped. Deleting the client deletes its subscriptions (client_id
--    cascade). Enqueueing and claiming check the grant again (oauth_grant_status),
--    so a delivery raced in beside a revocation is never sent.

ALTER TABLE webhook_subscriptions
  -- NULL only for a subscription made before this migration whose grant could
  -- not be found; such a row is disabled and cannot be re-enabled.
  ADD COLUMN grant_id uuid REFERENCES oauth_grants (id) ON DELETE CASCADE,
  ADD COLUMN disabled_reason text CHECK (disabled_reason IN (
    'delivery_failures', 'grant_revoked', 'user_deactivated', 'organization_deactivated', 'membership_removed'
  ));
CREATE INDEX webhook_subscriptions_grant_id_idx ON webhook_subscriptions (grant_id);

-- Existing subscriptions: the client's newest grant in the organization (a live one first).
UPDATE webhook_subscriptions s
   SET grant_id = (SELECT g.id FROM oauth_grants g JOIN oauth_clients c ON c.id = g.client_id
                    WHERE c.client_id = s.client_id AND g.organization_id = s.organization_id
                    ORDER BY g.revoked_at IS NULL DESC, g.created_at DESC LIMIT 1);
UPDATE webhook_subscriptions SET disabled_reason = 'delivery_failures' WHERE status = 'disabled';
UPDATE webhook_subscriptions s
   SET status = 'disabled', disabled_at = coalesce(s.disabled_at, now()), disabled_reason = 'grant_revoked', updated_at = now()
 WHERE s.grant_id IS NULL
    OR NOT EXISTS (SELECT 1 FROM oauth_grant_status g
                    WHERE g.grant_id = s.grant_id AND NOT g.grant_revoked AND g.principal_active);

ALTER TABLE webhook_subscriptions
  -- A reason only on a disabled row (one disabled without a reason reads as delivery_failures).
  ADD CONSTRAINT webhook_subscriptions_disabled_reason_only_check CHECK (disabled_reason IS NULL OR status = 'disabled'),
  ADD CONSTRAINT webhook_subscriptions_grant_check CHECK (grant_id IS NOT NULL OR status = 'disabled');

-- Stops the subscriptions of the given grants: disabled with `reason` (a
-- hook already disabled for failures takes the stronger reason), and their
-- pending deliveries dropped (failed, lease cleared: an attempt already on
-- the wire records as superseded). Runs as the caller: the connected-apps
-- revoke runs inside withOrg, where row-level security keeps it to the
-- organization whose grants it revoked.
CREATE FUNCTION webhooks_stop_for_grants(grant_ids uuid[], reason text) RETURNS void
  LANGUAGE sql
  AS $$
  UPDATE webhook_deliveries d
     SET status = 'failed', lease_token = NULL, lease_expires_at = NULL, finished_at = now(), updated_at = now()
    FROM webhook_subscriptions s
   WHERE s.grant_id = ANY (grant_ids) AND d.subscription_id = s.id AND d.status = 'pending';
  UPDATE webhook_subscriptions
     SET status = 'disabled', disabled_at = coalesce(disabled_at, now()), disabled_reason = reason, updated_at = now()
   WHERE grant_id = ANY (grant_ids) AND disabled_reason IS DISTINCT FROM reason;
$$;

CREATE FUNCTION oauth_grants_stop_webhooks() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  PERFORM webhooks_stop_for_grants(ARRAY[NEW.id], 'grant_revoked');
  RETURN NULL;
END
$$;
CREATE TRIGGER oauth_grants_stop_webhooks
  AFTER UPDATE OF revoked_at ON oauth_grants
  FOR EACH ROW WHEN (OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL)
  EXECUTE FUNCTION oauth_grants_stop_webhooks();

CREATE FUNCTION users_stop_webhooks() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  PERFORM webhooks_stop_for_grants(array(SELECT g.id FROM oauth_grants g WHERE g.user_id = NEW.id), 'user_deactivated');
  RETURN NULL;
END
$$;
CREATE TRIGGER users_stop_webhooks
  AFTER UPDATE OF active ON users
  FOR EACH ROW WHEN (OLD.active AND NOT NEW.active)
  EXECUTE FUNCTION users_stop_webhooks();

CREATE FUNCTION organizations_stop_webhooks() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  PERFORM webhooks_stop_for_grants(array(SELECT g.id FROM oauth_grants g WHERE g.organization_id = NEW.id), 'organization_deactivated');
  RETURN NULL;
END
$$;
CREATE TRIGGER organizations_stop_webhooks
  AFTER UPDATE OF active ON organizations
  FOR EACH ROW WHEN (OLD.active AND NOT NEW.active)
  EXECUTE FUNCTION organizations_stop_webhooks();

CREATE FUNCTION memberships_stop_webhooks() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  PERFORM webhooks_stop_for_grants(
    array(SELECT g.id FROM oauth_grants g WHERE g.user_id = OLD.user_id AND g.organization_id = OLD.organization_id),
    'membership_removed');
  RETURN NULL;
END
$$;
CREATE TRIGGER memberships_stop_webhooks
  AFTER DELETE ON memberships
  FOR EACH ROW
  EXECUTE FUNCTION memberships_stop_webhooks();

-- Whether a grant of the current organization still stands (oauth_grant_status),
-- for tenant queries (the outbox insert, re-enabling a hook). The view itself
-- is not granted to switchboard_app: it spans every organization and carries
-- client secret hashes; this answers one yes/no about one grant of the
-- organization set by withOrg.
CREATE FUNCTION app_grant_is_live(grant_id uuid) RETURNS boolean
  LANGUAGE sql STABLE SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
  SELECT EXISTS (SELECT 1 FROM oauth_grant_status s
                  WHERE s.grant_id = $1 AND s.organization_id = app_current_org()
                    AND NOT s.grant_revoked AND s.principal_active)
$$;
REVOKE ALL ON FUNCTION app_grant_is_live(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION app_grant_is_live(uuid) TO switchboard_app;

-- 6. Hook URL ports (WEBHOOK_ALLOWED_PORTS): an attempt to a port no longer
--    allowed is logged as 'blocked_port'.
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_error_check;
ALTER TABLE webhook_attempts ADD CONSTRAINT webhook_attempts_error_check CHECK (error IN (
  'timeout', 'connection', 'tls', 'blocked_address', 'blocked_port', 'invalid_url', 'lease_expired', 'internal'
));

-- 2. Refresh token rotation keeps one chain per grant. A rotated token points
--    to its successor and keeps it sealed (AES-256-GCM under SECRET_KEY, the
--    grant as associated data) for REFRESH_REUSE_GRACE, so a replay inside the
--    grace gets that same successor; housekeeping forgets it afterwards.
ALTER TABLE oauth_refresh_tokens
  ADD COLUMN successor_id uuid REFERENCES oauth_refresh_tokens (id) ON DELETE SET NULL,
  ADD COLUMN successor_ciphertext bytea;
CREATE INDEX oauth_refresh_tokens_successor_id_idx ON oauth_refresh_tokens (successor_id) WHERE successor_id IS NOT NULL;
-- Chains forked before this migration: each grant keeps its newest current token; the others are revoked.
UPDATE oauth_refresh_tokens r SET revoked_at = now()
 WHERE r.rotated_at IS NULL AND r.revoked_at IS NULL
   AND EXISTS (SELECT 1 FROM oauth_refresh_tokens n
                WHERE n.grant_id = r.grant_id AND n.rotated_at IS NULL AND n.revoked_at IS NULL
                  AND (n.created_at, n.id) > (r.created_at, r.id));
-- Exactly one current refresh token per grant.
CREATE UNIQUE INDEX oauth_refresh_tokens_one_current_per_grant
  ON oauth_refresh_tokens (grant_id) WHERE rotated_at IS NULL AND revoked_at IS NULL;

-- 4. Request work connects as its own login role (docs/security.md finding 4).
--    switchboard_request is neither superuser, owner nor BYPASSRLS. It is a
--    member of switchboard_app, so withOrg's SET LOCAL ROLE works and the
--    tenant policies (which name no role, so bind every role) apply to it
--    directly: a tenant query that forgets withOrg sees no rows at all.
--    It also reads and writes the system tables a request needs before an
--    organization is known (sessions, users, OAuth clients, codes, tokens,
--    the login throttle). Grants and memberships are identity data read
--    across organizations at sign-in, consent and token exchange: the request
--    role reaches them through its own policies below, while customer data
--    (locations, service areas, agents, calls, webhooks) is reachable only
--    with an organization set.
--    The password is not set here: `serve` sets it when it starts (derived
--    from the owner connection's credentials, src/db/request-pool.ts), or the
--    operator does and gives DATABASE_APP_URL.
DO $$
BEGIN
  CREATE ROLE switchboard_request LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
  NULL; -- roles are cluster-wide: another database of this cluster created it
END
$$;
GRANT switchboard_app TO switchboard_request;
GRANT USAGE ON SCHEMA public TO switchboard_request;
GRANT SELECT, INSERT, UPDATE, DELETE ON users, user_sessions, organizations, login_failures,
  oauth_clients, oauth_authorization_codes, oauth_access_tokens, oauth_refresh_tokens TO switchboard_request;
GRANT SELECT, INSERT, UPDATE, DELETE ON oauth_grants, memberships TO switchboard_request;
GRANT SELECT ON oauth_grant_status, schema_migrations TO switchboard_request;
CREATE POLICY oauth_grants_request_role ON oauth_grants TO switchboard_request USING (true) WITH CHECK (true);
CREATE POLICY memberships_request_role ON memberships TO switchboard_request USING (true) WITH CHECK (true);

-- Stopping a revoked grant's subscriptions is system work whoever revokes
-- (the token endpoint runs as switchboard_request without an organization):
-- the trigger functions run as their owner, and only they may call
-- webhooks_stop_for_grants.
ALTER FUNCTION oauth_grants_stop_webhooks() SECURITY DEFINER SET search_path = pg_catalog, public;
ALTER FUNCTION users_stop_webhooks() SECURITY DEFINER SET search_path = pg_catalog, public;
ALTER FUNCTION organizations_stop_webhooks() SECURITY DEFINER SET search_path = pg_catalog, public;
ALTER FUNCTION memberships_stop_webhooks() SECURITY DEFINER SET search_path = pg_catalog, public;
REVOKE ALL ON FUNCTION webhooks_stop_for_grants(uuid[], text) FROM PUBLIC;

-- FORCE: the tenant policies bind the tables' owner too. The owner's system
-- work (migrations, the delivery worker, the CLI, housekeeping) reaches every
-- row through an explicit policy for the role that runs the migrations, so
-- row access always comes from a named policy, never from ownership. (A
-- superuser owner bypasses row-level security regardless.)
DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['memberships', 'oauth_grants', 'locations', 'service_areas', 'agents', 'calls',
                           'webhook_subscriptions', 'webhook_deliveries', 'webhook_attempts'] LOOP
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY %I ON %I TO %I USING (true) WITH CHECK (true)', t || '_owner', t, current_user);
  END LOOP;
END
$$;
