-- The hot authenticated reads in one statement each (docs/performance.md):
-- the credential check, the organization setting, the application role and
-- the read itself, so GET /calls/recent and GET /locations cost one round
-- trip to PostgreSQL instead of four. Nothing is cached: revoking a token or a
-- grant, deactivating a user or organization, removing a membership or
-- rotating a client secret is refused by the very next statement, in every
-- process. Row-level security stays the tenant boundary: the reads run as
-- switchboard_app with app.organization_id set, exactly as withOrg does.

-- The principal behind an access token, with the client check done here so
-- the client's secret hash never leaves the definer's privileges. The same
-- conditions as findActiveAccessToken (tokens.queries.ts). SHA-256 digests
-- are compared with `=`: the presented value is a digest of what the caller
-- sent, so timing reveals nothing usable about the stored one.
-- PL/pgSQL rather than SQL: a SQL function that cannot be inlined (SECURITY
-- DEFINER) is planned again on every call, a PL/pgSQL one keeps its plan.
-- No SET search_path clause (it costs a configuration change per call and
-- more than the query itself): every name is schema-qualified instead, so a
-- caller's search_path (or pg_temp) cannot substitute a table.
CREATE FUNCTION app_access_token_principal(p_token_hash bytea, p_client_id text, p_secret_hash bytea)
  RETURNS TABLE (grant_id uuid, user_id uuid, organization_id uuid, client_id text, scopes text[], client_ok boolean)
  LANGUAGE plpgsql STABLE SECURITY DEFINER
  AS $$
BEGIN
  RETURN QUERY
  SELECT t.grant_id, s.user_id, s.organization_id, s.client_id, t.scopes,
         s.client_id = p_client_id AND s.client_secret_hash = p_secret_hash
    FROM public.oauth_access_tokens t
    JOIN public.oauth_grant_status s ON s.grant_id = t.grant_id
   WHERE t.token_hash = p_token_hash AND t.revoked_at IS NULL AND t.expires_at > pg_catalog.now()
     AND NOT s.grant_revoked AND s.principal_active;
END
$$;

-- The principal behind an x-user-token session: the same conditions as
-- findActiveSession (sessions.queries.ts).
CREATE FUNCTION app_session_principal(p_token_hash bytea)
  RETURNS TABLE (session_id uuid, user_id uuid, organization_id uuid)
  LANGUAGE plpgsql STABLE SECURITY DEFINER
  AS $$
BEGIN
  RETURN QUERY
  SELECT s.id, u.id, o.id
    FROM public.user_sessions s
    JOIN public.users u ON u.id = s.user_id AND u.active
    JOIN public.organizations o ON o.id = s.organization_id AND o.active
    JOIN public.memberships m ON m.user_id = u.id AND m.organization_id = o.id
   WHERE s.token_hash = p_token_hash AND s.expires_at > pg_catalog.now();
END
$$;

REVOKE EXECUTE ON FUNCTION app_access_token_principal(bytea, text, bytea) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION app_session_principal(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION app_access_token_principal(bytea, text, bytea) TO switchboard_app;
GRANT EXECUTE ON FUNCTION app_session_principal(bytea) TO switchboard_app;

-- What withOrg does at BEGIN, for the statement that calls it: the
-- organization, then the application role (unless the session already is
-- it), both transaction-local. A statement outside BEGIN is its own
-- transaction, so both end with it.
CREATE FUNCTION app_enter_organization(p_organization_id uuid) RETURNS void
  LANGUAGE plpgsql
  AS $$
BEGIN
  PERFORM set_config('app.organization_id', p_organization_id::text, true);
  IF current_user <> 'switchboard_app' THEN
    PERFORM set_config('role', 'switchboard_app', true);
  END IF;
END
$$;

-- ISO 8601 UTC with milliseconds, exactly as Date.prototype.toISOString writes it.
-- STABLE like to_char itself, so the planner inlines it into the reads.
CREATE FUNCTION app_iso_time(t timestamptz) RETURNS text
  LANGUAGE sql STABLE PARALLEL SAFE
  AS $$ SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;

-- GET /calls/recent: outcome 'ok' with the JSON body (the call.completed
-- event's six fields, in order, newest first), or why the request is refused
-- ('token_invalid', 'client_invalid', 'insufficient_scope') and no body.
-- The generic plan (an index scan of calls_organization_completed_idx) is the
-- right one for every limit up to 100, but its estimate for `LIMIT p_limit`
-- (a tenth of the table) looks dearer than a custom plan, so without the
-- setting PostgreSQL would plan the read again on every call.
CREATE FUNCTION app_platform_recent_calls(p_token_hash bytea, p_client_id text, p_secret_hash bytea, p_scope text, p_limit integer)
  RETURNS TABLE (outcome text, user_id uuid, organization_id uuid, client_id text, grant_id uuid, scopes text[], body text)
  LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan
  AS $$
DECLARE
  p record;
BEGIN
  SELECT * INTO p FROM app_access_token_principal(p_token_hash, p_client_id, p_secret_hash);
  IF NOT FOUND THEN
    outcome := 'token_invalid';
  ELSIF NOT p.client_ok THEN
    outcome := 'client_invalid';
  ELSIF NOT (p_scope = ANY (p.scopes)) THEN
    outcome := 'insufficient_scope';
  ELSE
    outcome := 'ok';
    user_id := p.user_id; organization_id := p.organization_id; client_id := p.client_id;
    grant_id := p.grant_id; scopes := p.scopes;
    PERFORM app_enter_organization(p.organization_id);
    SELECT '[' || coalesce(string_agg(r.event, ',' ORDER BY r.created_at DESC, r.id DESC), '') || ']'
      INTO body
      FROM (SELECT c.created_at, c.id,
                   row_to_json((SELECT e FROM (SELECT c.id, c.organization_id, app_iso_time(c.created_at) AS created_at,
                                                      c.summary, c.duration_seconds, c.agent_id) e))::text AS event
              FROM calls c
             WHERE c.status = 'completed'
             ORDER BY c.created_at DESC, c.id DESC
             LIMIT p_limit) r;
  END IF;
  RETURN NEXT;
END
$$;

-- GET /locations: outcome 'ok' with the JSON body (the Location schema's
-- fields in order; primary first, then by name), or 'token_invalid'.
CREATE FUNCTION app_session_locations(p_token_hash bytea)
  RETURNS TABLE (outcome text, session_id uuid, user_id uuid, organization_id uuid, body text)
  LANGUAGE plpgsql
  AS $$
DECLARE
  p record;
BEGIN
  SELECT * INTO p FROM app_session_principal(p_token_hash);
  IF NOT FOUND THEN
    outcome := 'token_invalid';
  ELSE
    outcome := 'ok';
    session_id := p.session_id; user_id := p.user_id; organization_id := p.organization_id;
    PERFORM app_enter_organization(p.organization_id);
    SELECT '[' || coalesce(string_agg(
             row_to_json((SELECT e FROM (SELECT l.id, l.organization_id, l.name, l.address_line1, l.address_line2, l.city,
                                                l.state, l.postal_code, l.country, l.latitude, l.longitude, l.is_primary,
                                                app_iso_time(l.created_at) AS created_at, app_iso_time(l.updated_at) AS updated_at) e))::text,
             ',' ORDER BY l.is_primary DESC, lower(l.name), l.name, l.created_at, l.id), '') || ']'
      INTO body
      FROM locations l;
  END IF;
  RETURN NEXT;
END
$$;
