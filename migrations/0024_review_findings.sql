-- Review findings (docs/security.md, "Review findings of the second review").

-- 3. TRUNCATE reaches the process caches. Migration 0012's triggers fire on
--    UPDATE and DELETE; TRUNCATE fires neither, so a token kept working from
--    a cache until CACHE_MAX_AGE. TRUNCATE names no rows, so these
--    statement-level triggers tell every process to drop each whole cache
--    whose entries may rest on the table: the tag `flush:<cache>`
--    (access_tokens, sessions, clients, reads; src/cache/process-caches.ts).
--    A TRUNCATE ... CASCADE fires the trigger of every table it empties.
CREATE FUNCTION app_cache_truncated() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  PERFORM app_cache_notify(ARRAY(SELECT 'flush:' || c FROM unnest(TG_ARGV) c));
  RETURN NULL;
END
$$;

-- Access-token entries carry their grant, user, organization and client (the
-- client's secret hash included); session entries their user and organization;
-- the reads are one organization's calls and locations.
CREATE TRIGGER oauth_access_tokens_cache_truncate AFTER TRUNCATE ON oauth_access_tokens
  FOR EACH STATEMENT EXECUTE FUNCTION app_cache_truncated('access_tokens');
CREATE TRIGGER oauth_grants_cache_truncate AFTER TRUNCATE ON oauth_grants
  FOR EACH STATEMENT EXECUTE FUNCTION app_cache_truncated('access_tokens');
CREATE TRIGGER oauth_clients_cache_truncate AFTER TRUNCATE ON oauth_clients
  FOR EACH STATEMENT EXECUTE FUNCTION app_cache_truncated('clients', 'access_tokens');
CREATE TRIGGER users_cache_truncate AFTER TRUNCATE ON users
  FOR EACH STATEMENT EXECUTE FUNCTION app_cache_truncated('access_tokens', 'sessions');
CREATE TRIGGER memberships_cache_truncate AFTER TRUNCATE ON memberships
  FOR EACH STATEMENT EXECUTE FUNCTION app_cache_truncated('access_tokens', 'sessions');
CREATE TRIGGER organizations_cache_truncate AFTER TRUNCATE ON organizations
  FOR EACH STATEMENT EXECUTE FUNCTION app_cache_truncated('access_tokens', 'sessions', 'reads');
CREATE TRIGGER user_sessions_cache_truncate AFTER TRUNCATE ON user_sessions
  FOR EACH STATEMENT EXECUTE FUNCTION app_cache_truncated('sessions');
CREATE TRIGGER calls_cache_truncate AFTER TRUNCATE ON calls
  FOR EACH STATEMENT EXECUTE FUNCTION app_cache_truncated('reads');
CREATE TRIGGER locations_cache_truncate AFTER TRUNCATE ON locations
  FOR EACH STATEMENT EXECUTE FUNCTION app_cache_truncated('reads');

-- 4. The sealed rollups (migration 0011) force row-level security like every
--    other tenant table (0007): the tenant policy binds their owner too, and
--    the owner's own work on them — retention deleting old hours
--    (src/webhooks/worker/retention.ts) — reaches every row through an
--    explicit policy for the role that runs the migrations. Requests write
--    them as switchboard_app inside withOrg, under the tenant policy as
--    before; the cascades from organizations and subscriptions are
--    referential actions, which row-level security does not filter.
DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['calls_per_day', 'webhook_attempts_per_hour'] LOOP
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY %I ON %I TO %I USING (true) WITH CHECK (true)', t || '_owner', t, current_user);
  END LOOP;
END
$$;
