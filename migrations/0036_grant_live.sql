-- "The grant is live" in one place: oauth_grant_status.live, true while the
-- grant is not revoked and its user, organization and membership are active.
-- Every statement that asks reads that column: app_grant_is_live (the outbox
-- and subscribing), app_active_access_token (the token check),
-- app_refresh_exchange (the refresh), the delivery claim
-- (src/webhooks/worker/claim-predicates.queries.ts) and the code exchange,
-- whose check (check-grant-active.ts) only picks the error's wording from
-- grant_revoked and principal_active. The functions below are the live ones,
-- with that one test in place of the two columns; nothing else changes.
CREATE OR REPLACE VIEW oauth_grant_status AS
 SELECT g.id AS grant_id,
    c.client_id,
    c.secret_hash AS client_secret_hash,
    g.user_id,
    u.email,
    u.name AS user_name,
    g.organization_id,
    o.name AS organization_name,
    g.scopes,
    g.revoked_at IS NOT NULL AS grant_revoked,
    u.active AND o.active AND m.user_id IS NOT NULL AS principal_active,
    g.revoked_at IS NULL AND u.active AND o.active AND m.user_id IS NOT NULL AS live
   FROM oauth_grants g
     JOIN oauth_clients c ON c.id = g.client_id
     JOIN users u ON u.id = g.user_id
     JOIN organizations o ON o.id = g.organization_id
     LEFT JOIN memberships m ON m.user_id = g.user_id AND m.organization_id = g.organization_id;

CREATE OR REPLACE FUNCTION public.app_active_access_token(p_token_hash bytea)
 RETURNS TABLE(grant_id uuid, scopes text[], expires_at timestamp with time zone, user_id uuid, email text, user_name text, organization_id uuid, organization_name text, client_id text, client_secret_hash bytea)
 LANGUAGE sql
 STABLE
AS $function$
  SELECT t.grant_id, t.scopes, t.expires_at, s.user_id, s.email, s.user_name,
         s.organization_id, s.organization_name, s.client_id, s.client_secret_hash
    FROM oauth_access_tokens t
    JOIN oauth_grant_status s ON s.grant_id = t.grant_id
   WHERE t.token_hash = p_token_hash AND t.revoked_at IS NULL AND t.expires_at > now()
     AND s.live
$function$;

CREATE OR REPLACE FUNCTION public.app_grant_is_live(grant_id uuid)
 RETURNS boolean
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'public'
AS $function$
BEGIN
  RETURN EXISTS (SELECT 1 FROM oauth_grant_status s
                  WHERE s.grant_id = $1 AND s.organization_id = app_current_org()
                    AND s.live);
END
$function$;
REVOKE ALL ON FUNCTION app_grant_is_live(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION app_grant_is_live(uuid) TO switchboard_app;

CREATE OR REPLACE FUNCTION public.app_refresh_exchange(p_token_hash bytea, p_client_id text, p_requested_scopes text[], p_access_scopes text[], p_max_lifetime_seconds integer, p_access_hash bytea, p_access_ttl_seconds integer, p_successor_id uuid, p_refresh_hash bytea, p_refresh_ttl_seconds integer, p_sealed_successor bytea)
 RETURNS text[]
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_id uuid;
  v_grant_id uuid;
  v_scopes text[];
  v_grant_created_at timestamptz;
  v_access_scopes text[];
  v_current boolean;
BEGIN
  -- Before any row: a deletion of the client waits for this rotation to end,
  -- or this rotation waits for the deletion (and then finds no token).
  PERFORM app_lock_client_shared(p_client_id);
  -- The token by its hash alone, then its grant by primary key. Conditions in
  -- the token's WHERE would let the planner pick the one-current-per-grant
  -- partial index (its predicate matches them) and walk it; one join from the
  -- view's client_id would walk every token of that client's grants.
  SELECT r.id, r.grant_id, r.scopes,
         r.rotated_at IS NULL AND r.revoked_at IS NULL AND r.expires_at > now()
           AND (p_requested_scopes IS NULL OR p_requested_scopes <@ r.scopes)
    INTO v_id, v_grant_id, v_scopes, v_current
    FROM oauth_refresh_tokens r
   WHERE r.token_hash = p_token_hash
     FOR UPDATE;
  IF NOT FOUND OR NOT v_current THEN
    RETURN NULL;
  END IF;
  SELECT g.created_at INTO v_grant_created_at
    FROM oauth_grant_status s
    JOIN oauth_grants g ON g.id = s.grant_id
   WHERE s.grant_id = v_grant_id
     AND s.client_id = p_client_id
     AND s.live
     AND (p_max_lifetime_seconds IS NULL OR now() - g.created_at < make_interval(secs => p_max_lifetime_seconds));
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  v_access_scopes := coalesce(p_access_scopes, v_scopes);
  UPDATE oauth_refresh_tokens
     SET rotated_at = now(), successor_id = p_successor_id, successor_ciphertext = p_sealed_successor
   WHERE id = v_id;
  INSERT INTO oauth_refresh_tokens (id, token_hash, grant_id, scopes, expires_at)
    VALUES (p_successor_id, p_refresh_hash, v_grant_id, v_scopes,
            CASE WHEN p_max_lifetime_seconds IS NULL THEN now() + make_interval(secs => p_refresh_ttl_seconds)
                 ELSE least(now() + make_interval(secs => p_refresh_ttl_seconds),
                            v_grant_created_at + make_interval(secs => p_max_lifetime_seconds)) END);
  INSERT INTO oauth_access_tokens (token_hash, grant_id, scopes, expires_at)
    VALUES (p_access_hash, v_grant_id, v_access_scopes, now() + make_interval(secs => p_access_ttl_seconds));
  RETURN v_access_scopes;
END
$function$;
