-- The previous release (0.1.0) calls these three functions, which 0043
-- dropped: its processes run beside this release's during a rolling restart
-- (docs/operations.md, "Upgrading"), so they are made again exactly as 0.1.0
-- knew them. This release never calls them; the migration of the release
-- after this one drops them.

CREATE TYPE app_call_completed_fields AS (
  id               uuid,
  organization_id  uuid,
  created_at       text,
  summary          text,
  duration_seconds integer,
  agent_id         uuid
);

CREATE FUNCTION app_call_completed_event(
  p_id uuid, p_organization_id uuid, p_created_at timestamptz, p_summary text, p_duration_seconds integer, p_agent_id uuid
) RETURNS text
  LANGUAGE sql STABLE PARALLEL SAFE
  AS $$
SELECT row_to_json(ROW(p_id, p_organization_id, app_iso_time(p_created_at), p_summary, p_duration_seconds, p_agent_id)
                   ::app_call_completed_fields)::text
$$;

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
                 app_call_completed_event(c.id, c.organization_id, c.created_at, c.summary, c.duration_seconds, c.agent_id) AS event
            FROM calls c
           WHERE c.status = 'completed'
           ORDER BY c.created_at DESC, c.id DESC
           LIMIT p_limit) r;
  RETURN body;
END
$$;

CREATE FUNCTION app_recent_calls_for_token(p_token_hash bytea, p_limit integer)
  RETURNS TABLE(grant_id uuid, scopes text[], expires_at timestamp with time zone, user_id uuid, email text, user_name text,
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
