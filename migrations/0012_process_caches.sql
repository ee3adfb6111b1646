-- Process caches (docs/decisions.md, "Caches"):
-- each serve process keeps verified credentials and the JSON of the two hot
-- reads in memory, and evicts them when PostgreSQL says what changed. The
-- triggers below are statement-level with transition tables, so a statement
-- that touches many rows sends one notification, and they run for every
-- writer (the API, the CLI, the worker, psql): no code path can forget them.
--
-- The channel carries tags, comma-separated:
--   grant:<uuid>  user:<uuid>  org:<uuid>  client:<client_id>  session:<uuid>
--   calls:<organization uuid>  locations:<organization uuid>
-- or `flush` when a statement touched too many things to list (a notification
-- holds at most 8000 bytes). A notification is delivered at commit, only if
-- the transaction commits; listeners evict every entry carrying a tag.
-- Inserting tokens and sessions sends nothing: a new credential cannot end
-- anyone's access, and refresh rotation inserts all the time.

CREATE FUNCTION app_cache_notify(p_tags text[]) RETURNS void
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF p_tags IS NULL OR cardinality(p_tags) = 0 THEN
    RETURN;
  ELSIF cardinality(p_tags) > 100 THEN
    PERFORM pg_notify('switchboard_cache', 'flush');
  ELSE
    PERFORM pg_notify('switchboard_cache', array_to_string(p_tags, ','));
  END IF;
END
$$;

-- Access tokens: a revoked one (UPDATE) or a deleted one that had not expired
-- (a cascade from its grant or client; housekeeping deletes only expired ones).
CREATE FUNCTION app_cache_access_tokens_changed() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  PERFORM app_cache_notify(ARRAY(SELECT DISTINCT 'grant:' || o.grant_id FROM old_rows o WHERE o.expires_at > now()));
  RETURN NULL;
END
$$;
CREATE TRIGGER oauth_access_tokens_cache_update AFTER UPDATE ON oauth_access_tokens
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_cache_access_tokens_changed();
CREATE TRIGGER oauth_access_tokens_cache_delete AFTER DELETE ON oauth_access_tokens
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_cache_access_tokens_changed();

CREATE FUNCTION app_cache_grants_changed() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  PERFORM app_cache_notify(ARRAY(SELECT DISTINCT 'grant:' || o.id FROM old_rows o));
  RETURN NULL;
END
$$;
CREATE TRIGGER oauth_grants_cache_update AFTER UPDATE ON oauth_grants
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_cache_grants_changed();
CREATE TRIGGER oauth_grants_cache_delete AFTER DELETE ON oauth_grants
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_cache_grants_changed();

-- Clients: a rotated secret (UPDATE) or a deleted client. Entries keep the
-- client's secret hash, so the rotation must reach them.
CREATE FUNCTION app_cache_clients_changed() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  PERFORM app_cache_notify(ARRAY(SELECT DISTINCT 'client:' || o.client_id FROM old_rows o));
  RETURN NULL;
END
$$;
CREATE TRIGGER oauth_clients_cache_update AFTER UPDATE ON oauth_clients
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_cache_clients_changed();
CREATE TRIGGER oauth_clients_cache_delete AFTER DELETE ON oauth_clients
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_cache_clients_changed();

-- Users (deactivated, renamed, deleted): every credential of theirs.
CREATE FUNCTION app_cache_users_changed() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  PERFORM app_cache_notify(ARRAY(SELECT DISTINCT 'user:' || o.id FROM old_rows o));
  RETURN NULL;
END
$$;
CREATE TRIGGER users_cache_update AFTER UPDATE ON users
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_cache_users_changed();
CREATE TRIGGER users_cache_delete AFTER DELETE ON users
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_cache_users_changed();

-- Memberships (removed, role changed): every credential of the member.
CREATE FUNCTION app_cache_memberships_changed() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  PERFORM app_cache_notify(ARRAY(SELECT DISTINCT 'user:' || o.user_id FROM old_rows o));
  RETURN NULL;
END
$$;
CREATE TRIGGER memberships_cache_update AFTER UPDATE ON memberships
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_cache_memberships_changed();
CREATE TRIGGER memberships_cache_delete AFTER DELETE ON memberships
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_cache_memberships_changed();

-- Organizations (deactivated, renamed, deleted): every credential acting in them.
CREATE FUNCTION app_cache_organizations_changed() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  PERFORM app_cache_notify(ARRAY(SELECT DISTINCT 'org:' || o.id FROM old_rows o));
  RETURN NULL;
END
$$;
CREATE TRIGGER organizations_cache_update AFTER UPDATE ON organizations
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_cache_organizations_changed();
CREATE TRIGGER organizations_cache_delete AFTER DELETE ON organizations
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_cache_organizations_changed();

-- Sessions: signed out (DELETE), moved to another organization (UPDATE).
-- Housekeeping deletes only expired sessions, which no cache answers for.
CREATE FUNCTION app_cache_sessions_changed() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  PERFORM app_cache_notify(ARRAY(SELECT DISTINCT 'session:' || o.id FROM old_rows o WHERE o.expires_at > now()));
  RETURN NULL;
END
$$;
CREATE TRIGGER user_sessions_cache_update AFTER UPDATE ON user_sessions
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_cache_sessions_changed();
CREATE TRIGGER user_sessions_cache_delete AFTER DELETE ON user_sessions
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_cache_sessions_changed();

-- Calls: /calls/recent lists completed calls only, so a call recorded in
-- progress changes nothing and notifies nothing.
CREATE FUNCTION app_cache_calls_inserted() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  PERFORM app_cache_notify(ARRAY(SELECT DISTINCT 'calls:' || n.organization_id FROM new_rows n WHERE n.status = 'completed'));
  RETURN NULL;
END
$$;
CREATE FUNCTION app_cache_calls_changed() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  PERFORM app_cache_notify(ARRAY(
    SELECT 'calls:' || n.organization_id FROM new_rows n WHERE n.status = 'completed'
     UNION
    SELECT 'calls:' || o.organization_id FROM old_rows o WHERE o.status = 'completed'));
  RETURN NULL;
END
$$;
CREATE FUNCTION app_cache_calls_deleted() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  PERFORM app_cache_notify(ARRAY(SELECT DISTINCT 'calls:' || o.organization_id FROM old_rows o WHERE o.status = 'completed'));
  RETURN NULL;
END
$$;
CREATE TRIGGER calls_cache_insert AFTER INSERT ON calls
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_cache_calls_inserted();
CREATE TRIGGER calls_cache_update AFTER UPDATE ON calls
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_cache_calls_changed();
CREATE TRIGGER calls_cache_delete AFTER DELETE ON calls
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_cache_calls_deleted();

CREATE FUNCTION app_cache_locations_inserted() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  PERFORM app_cache_notify(ARRAY(SELECT DISTINCT 'locations:' || n.organization_id FROM new_rows n));
  RETURN NULL;
END
$$;
CREATE FUNCTION app_cache_locations_changed() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  PERFORM app_cache_notify(ARRAY(SELECT DISTINCT 'locations:' || o.organization_id FROM old_rows o));
  RETURN NULL;
END
$$;
CREATE TRIGGER locations_cache_insert AFTER INSERT ON locations
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_cache_locations_inserted();
-- An UPDATE cannot move a location to another organization (the policy's
-- WITH CHECK), so the old rows name every organization touched.
CREATE TRIGGER locations_cache_update AFTER UPDATE ON locations
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_cache_locations_changed();
CREATE TRIGGER locations_cache_delete AFTER DELETE ON locations
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_cache_locations_changed();

-- The two hot reads for an organization the caller has already verified, in
-- one statement: the organization and the role switchboard_app set for this
-- statement only (app_enter_organization, as withOrg does), then the same
-- read as app_platform_recent_calls / app_session_locations (migration 0010)
-- under row-level security. The request role may already enter any
-- organization (withOrg), so these functions give it nothing new; what
-- decides which organization a request reads is the verified principal.
CREATE FUNCTION app_org_recent_calls(p_organization_id uuid, p_limit integer) RETURNS text
  LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan
  AS $$
DECLARE
  body text;
BEGIN
  PERFORM app_enter_organization(p_organization_id);
  SELECT '[' || coalesce(string_agg(r.event, ',' ORDER BY r.created_at DESC, r.id DESC), '') || ']'
    INTO body
    FROM (SELECT c.created_at, c.id,
                 row_to_json((SELECT e FROM (SELECT c.id, c.organization_id, app_iso_time(c.created_at) AS created_at,
                                                    c.summary, c.duration_seconds, c.agent_id) e))::text AS event
            FROM calls c
           WHERE c.status = 'completed'
           ORDER BY c.created_at DESC, c.id DESC
           LIMIT p_limit) r;
  RETURN body;
END
$$;

CREATE FUNCTION app_org_locations(p_organization_id uuid) RETURNS text
  LANGUAGE plpgsql
  AS $$
DECLARE
  body text;
BEGIN
  PERFORM app_enter_organization(p_organization_id);
  SELECT '[' || coalesce(string_agg(
           row_to_json((SELECT e FROM (SELECT l.id, l.organization_id, l.name, l.address_line1, l.address_line2, l.city,
                                              l.state, l.postal_code, l.country, l.latitude, l.longitude, l.is_primary,
                                              app_iso_time(l.created_at) AS created_at, app_iso_time(l.updated_at) AS updated_at) e))::text,
           ',' ORDER BY l.is_primary DESC, lower(l.name), l.name, l.created_at, l.id), '') || ']'
    INTO body
    FROM locations l;
  RETURN body;
END
$$;

-- Refresh rotation in one statement (goal: ≥ 1,000 rotations/s): the
-- token endpoint reads the presented token and runs its checks
-- (src/oauth/checks), then this function, which locks the token again and
-- rotates it only if it is still what the checks saw: current (unrotated,
-- unrevoked, unexpired), its grant live, within REFRESH_TOKEN_MAX_LIFETIME.
-- Then, in an order that keeps one chain per grant: the token marked
-- rotated first, so the one-current-token-per-grant index admits the
-- successor; the access token; the successor (same scopes, expiry capped by
-- the grant's maximum lifetime); the successor's id and sealed plaintext on
-- the rotated row, for a replay within REFRESH_REUSE_GRACE. NULL means the
-- token changed in between (a concurrent refresh rotated it): the caller
-- takes the transactional path, which sees the rotation and answers as a
-- replay or a reuse.
CREATE FUNCTION app_refresh_rotate(
  p_id uuid, p_grant_id uuid,
  p_access_hash bytea, p_access_scopes text[], p_access_expires_at timestamptz,
  p_refresh_hash bytea, p_refresh_expires_at timestamptz, p_max_lifetime_seconds integer,
  p_sealed_successor bytea
) RETURNS uuid
  LANGUAGE plpgsql
  AS $$
DECLARE
  v_scopes text[];
  v_grant_created_at timestamptz;
  v_successor uuid;
BEGIN
  SELECT r.scopes, g.created_at INTO v_scopes, v_grant_created_at
    FROM oauth_refresh_tokens r
    JOIN oauth_grant_status s ON s.grant_id = r.grant_id
    JOIN oauth_grants g ON g.id = r.grant_id
   WHERE r.id = p_id AND r.grant_id = p_grant_id
     AND r.rotated_at IS NULL AND r.revoked_at IS NULL AND r.expires_at > now()
     AND NOT s.grant_revoked AND s.principal_active
     AND (p_max_lifetime_seconds IS NULL OR now() - g.created_at < make_interval(secs => p_max_lifetime_seconds))
     FOR UPDATE OF r;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  UPDATE oauth_refresh_tokens SET rotated_at = now() WHERE id = p_id;
  INSERT INTO oauth_access_tokens (token_hash, grant_id, scopes, expires_at)
    VALUES (p_access_hash, p_grant_id, p_access_scopes, p_access_expires_at);
  INSERT INTO oauth_refresh_tokens (token_hash, grant_id, scopes, expires_at)
    VALUES (p_refresh_hash, p_grant_id, v_scopes,
            CASE WHEN p_max_lifetime_seconds IS NULL THEN p_refresh_expires_at
                 ELSE least(p_refresh_expires_at, v_grant_created_at + make_interval(secs => p_max_lifetime_seconds)) END)
    RETURNING id INTO v_successor;
  UPDATE oauth_refresh_tokens SET successor_id = v_successor, successor_ciphertext = p_sealed_successor WHERE id = p_id;
  RETURN v_successor;
END
$$;
