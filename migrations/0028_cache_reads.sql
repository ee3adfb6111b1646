-- The two hot reads with nothing cached, rebuilt so that the credential
-- rules have one home each and the platform guard's order has one home
-- (checkPlatformAccess, src/oauth/platform-guard.ts):
--
-- * app_active_access_token and app_active_session say once which token or
--   session is active. findActiveAccessToken and findActiveSession read them
--   (they are SQL functions, inlined into the caller's plan), and so do the
--   one-statement reads below. app_access_token_principal and
--   app_session_principal (migration 0010) go.
-- * GET /calls/recent and GET /locations read, in one statement, the
--   credential's whole principal (what the process caches keep) and its
--   organization's body (app_org_recent_calls / app_org_locations, migration
--   0012, under row-level security). They decide nothing: the caller checks
--   the principal in TypeScript, as it does a cached one, and drops the body
--   of a refused request. app_platform_recent_calls and app_session_locations
--   (migration 0010), which checked in SQL and spelled each read again, go.

-- The same conditions as before: unexpired and unrevoked, its grant
-- unrevoked, its user, organization and membership active (oauth_grant_status).
CREATE FUNCTION app_active_access_token(p_token_hash bytea)
  RETURNS TABLE (grant_id uuid, scopes text[], expires_at timestamptz, user_id uuid, email text, user_name text,
                 organization_id uuid, organization_name text, client_id text, client_secret_hash bytea)
  LANGUAGE sql STABLE
  AS $$
  SELECT t.grant_id, t.scopes, t.expires_at, s.user_id, s.email, s.user_name,
         s.organization_id, s.organization_name, s.client_id, s.client_secret_hash
    FROM oauth_access_tokens t
    JOIN oauth_grant_status s ON s.grant_id = t.grant_id
   WHERE t.token_hash = p_token_hash AND t.revoked_at IS NULL AND t.expires_at > now()
     AND NOT s.grant_revoked AND s.principal_active
$$;

-- Unexpired, its user and organization active, the user still a member.
CREATE FUNCTION app_active_session(p_token_hash bytea)
  RETURNS TABLE (session_id uuid, expires_at timestamptz, user_id uuid, email text, user_name text,
                 organization_id uuid, organization_name text, role text)
  LANGUAGE sql STABLE
  AS $$
  SELECT s.id, s.expires_at, u.id, u.email, u.name, o.id, o.name, m.role
    FROM user_sessions s
    JOIN users u ON u.id = s.user_id AND u.active
    JOIN organizations o ON o.id = s.organization_id AND o.active
    JOIN memberships m ON m.user_id = u.id AND m.organization_id = o.id
   WHERE s.token_hash = p_token_hash AND s.expires_at > now()
$$;

-- No row: no active token. The principal is read before the body, which
-- runs as switchboard_app in the principal's organization for the rest of
-- the statement (app_enter_organization).
CREATE FUNCTION app_recent_calls_for_token(p_token_hash bytea, p_limit integer)
  RETURNS TABLE (grant_id uuid, scopes text[], expires_at timestamptz, user_id uuid, email text, user_name text,
                 organization_id uuid, organization_name text, client_id text, client_secret_hash bytea, body text)
  LANGUAGE plpgsql
  AS $$
DECLARE
  p record;
BEGIN
  SELECT * INTO p FROM app_active_access_token(p_token_hash);
  IF FOUND THEN
    RETURN QUERY SELECT p.grant_id, p.scopes, p.expires_at, p.user_id, p.email, p.user_name,
                        p.organization_id, p.organization_name, p.client_id, p.client_secret_hash,
                        app_org_recent_calls(p.organization_id, p_limit);
  END IF;
END
$$;

-- No row: no active session.
CREATE FUNCTION app_locations_for_session(p_token_hash bytea)
  RETURNS TABLE (session_id uuid, expires_at timestamptz, user_id uuid, email text, user_name text,
                 organization_id uuid, organization_name text, role text, body text)
  LANGUAGE plpgsql
  AS $$
DECLARE
  p record;
BEGIN
  SELECT * INTO p FROM app_active_session(p_token_hash);
  IF FOUND THEN
    RETURN QUERY SELECT p.session_id, p.expires_at, p.user_id, p.email, p.user_name,
                        p.organization_id, p.organization_name, p.role, app_org_locations(p.organization_id);
  END IF;
END
$$;

DROP FUNCTION app_platform_recent_calls(bytea, text, bytea, text, integer);
DROP FUNCTION app_session_locations(bytea);
DROP FUNCTION app_access_token_principal(bytea, text, bytea);
DROP FUNCTION app_session_principal(bytea);
