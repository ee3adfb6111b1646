-- One home for each JSON shape PostgreSQL writes.
--
-- The call.completed event (the webhook body stored by the outbox, each
-- element of GET /calls/recent) is app_call_completed_event, and the
-- recent-calls read (app_org_recent_calls) writes each element with it.
-- CallCompletedEventSchema (src/calls/calls.schemas.ts) describes the event;
-- test/calls/call-completed-event.test.ts holds the two equal.

-- The six fields of the event, in order: row_to_json names them from this
-- type and writes them without spaces, escaping text as JSON.stringify does.
CREATE TYPE app_call_completed_fields AS (
  id               uuid,
  organization_id  uuid,
  created_at       text,
  summary          text,
  duration_seconds integer,
  agent_id         uuid
);

-- One expression, no FROM: PostgreSQL inlines the function into the
-- statements that call it (the outbox insert, the reads), so it costs what
-- the expression costs.
CREATE FUNCTION app_call_completed_event(
  p_id uuid, p_organization_id uuid, p_created_at timestamptz, p_summary text, p_duration_seconds integer, p_agent_id uuid
) RETURNS text
  LANGUAGE sql STABLE PARALLEL SAFE
  AS $$
SELECT row_to_json(ROW(p_id, p_organization_id, app_iso_time(p_created_at), p_summary, p_duration_seconds, p_agent_id)
                   ::app_call_completed_fields)::text
$$;

-- GET /calls/recent for an organization: its completed calls, newest first,
-- as a JSON array of events, read as switchboard_app under row-level security.
CREATE OR REPLACE FUNCTION app_org_recent_calls(p_organization_id uuid, p_limit integer) RETURNS text
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
