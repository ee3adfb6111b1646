-- A call a Zap can act on (docs/interface.md §2.3, §12): who called, which
-- way, where, a recording and a transcript, the voice service's references,
-- and the names of the agent and location as they were when the call
-- completed (kept with the call, so a later rename changes no delivery).
-- Subscriptions carry filters, decided in the statement that fans a call out.

ALTER TABLE calls
  ADD COLUMN direction text CONSTRAINT calls_direction_check CHECK (direction IN ('inbound', 'outbound')),
  ADD COLUMN from_number text CONSTRAINT calls_from_number_check CHECK (from_number ~ '^\+[1-9][0-9]{1,14}$'),
  ADD COLUMN to_number text CONSTRAINT calls_to_number_check CHECK (to_number ~ '^\+[1-9][0-9]{1,14}$'),
  ADD COLUMN location_id uuid,
  ADD COLUMN recording_url text
    CONSTRAINT calls_recording_url_check CHECK (length(recording_url) <= 2048 AND recording_url LIKE 'https://%'),
  ADD COLUMN transcript text CONSTRAINT calls_transcript_check CHECK (length(transcript) <= 50000),
  -- json, not jsonb: kept as the request spelled it (compact, as JSON.stringify
  -- writes it), so the event stays the bytes JSON.stringify would write.
  ADD COLUMN metadata json NOT NULL DEFAULT '{}' CONSTRAINT calls_metadata_check CHECK (json_typeof(metadata) = 'object'),
  ADD COLUMN agent_name text,
  ADD COLUMN location_name text,
  -- A deleted location leaves its calls (and their kept location_name) in place.
  ADD CONSTRAINT calls_location_fkey FOREIGN KEY (organization_id, location_id)
    REFERENCES locations (organization_id, id) ON DELETE SET NULL (location_id);

-- PATCH /agents/{id} renames an agent (owners and admins, checked by the route).
GRANT UPDATE (name) ON agents TO switchboard_app;

-- GET /calls?number=… (either side), newest first.
CREATE INDEX calls_from_number_idx ON calls (organization_id, from_number, created_at DESC) WHERE from_number IS NOT NULL;
CREATE INDEX calls_to_number_idx ON calls (organization_id, to_number, created_at DESC) WHERE to_number IS NOT NULL;
-- The foreign key's ON DELETE finds a location's calls by this.
CREATE INDEX calls_location_idx ON calls (organization_id, location_id) WHERE location_id IS NOT NULL;

-- Filters of a subscription (direction, location_id, agent_id,
-- min_duration_seconds), checked at the edge; '{}' matches every call.
ALTER TABLE webhook_subscriptions
  ADD COLUMN filters jsonb NOT NULL DEFAULT '{}'
    CONSTRAINT webhook_subscriptions_filters_check CHECK (jsonb_typeof(filters) = 'object');

-- The call's page in the web UI: BASE_URL, which every transaction of the
-- application sets (app.base_url, src/db/with-org.ts), then the path.
CREATE FUNCTION app_call_url(p_id uuid) RETURNS text
  LANGUAGE sql STABLE PARALLEL SAFE
  AS $$ SELECT coalesce(current_setting('app.base_url', true), '') || '/ui/calls/' || p_id $$;

-- The fields of the call.completed event, in order: the seed's six, then the
-- ones a Zap acts on. row_to_json names them from this type.
CREATE TYPE app_call_event_fields AS (
  id               uuid,
  organization_id  uuid,
  created_at       text,
  summary          text,
  duration_seconds integer,
  agent_id         uuid,
  direction        text,
  from_number      text,
  to_number        text,
  agent_name       text,
  location_id      uuid,
  location_name    text,
  recording_url    text,
  transcript       text,
  metadata         json,
  url              text
);

-- The one home of the event's shape (the outbox's body, each /calls/recent
-- element). One expression, no FROM: PostgreSQL inlines it.
CREATE FUNCTION app_call_event(c calls) RETURNS text
  LANGUAGE sql STABLE PARALLEL SAFE
  AS $$
SELECT row_to_json(ROW(c.id, c.organization_id, app_iso_time(c.created_at), c.summary, c.duration_seconds, c.agent_id,
                       c.direction, c.from_number, c.to_number, c.agent_name, c.location_id, c.location_name,
                       c.recording_url, c.transcript, c.metadata, app_call_url(c.id))::app_call_event_fields)::text
$$;

-- Whether a subscription's filters let a call through: every key given must
-- match; a call without a direction never matches a direction filter. The one
-- home of the rule, used by the outbox and by /calls/recent.
CREATE FUNCTION app_filters_match(f jsonb, p_direction text, p_location_id uuid, p_agent_id uuid, p_duration integer)
  RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$
SELECT coalesce((f->>'direction' IS NULL OR f->>'direction' = p_direction)
            AND (f->>'location_id' IS NULL OR (f->>'location_id')::uuid = p_location_id)
            AND (f->>'agent_id' IS NULL OR (f->>'agent_id')::uuid = p_agent_id)
            AND (f->>'min_duration_seconds' IS NULL OR p_duration >= (f->>'min_duration_seconds')::integer), false)
$$;

-- GET /calls/recent for an organization, with the trigger's filters.
CREATE FUNCTION app_org_recent_calls(p_organization_id uuid, p_limit integer, p_filters jsonb, p_base_url text) RETURNS text
  LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan
  AS $$
DECLARE
  body text;
BEGIN
  PERFORM app_enter_organization(p_organization_id);
  PERFORM set_config('app.base_url', p_base_url, true);
  SELECT '[' || coalesce(string_agg(r.event, ',' ORDER BY r.created_at DESC, r.id DESC), '') || ']'
    INTO body
    FROM (SELECT c.created_at, c.id, app_call_event(c) AS event
            FROM calls c
           WHERE c.status = 'completed'
             AND app_filters_match(p_filters, c.direction, c.location_id, c.agent_id, c.duration_seconds)
           ORDER BY c.created_at DESC, c.id DESC
           LIMIT p_limit) r;
  RETURN body;
END
$$;

CREATE FUNCTION app_recent_calls_for_token(p_token_hash bytea, p_limit integer, p_filters jsonb, p_base_url text)
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
                        app_org_recent_calls(p.organization_id, p_limit, p_filters, p_base_url);
  END IF;
END
$$;

DROP FUNCTION app_recent_calls_for_token(bytea, integer);
DROP FUNCTION app_org_recent_calls(uuid, integer);
DROP FUNCTION app_call_completed_event(uuid, uuid, timestamptz, text, integer, uuid);
DROP TYPE app_call_completed_fields;
