-- A lock per OAuth client, taken shared by everything that writes a client's
-- grants or tokens from a token request (refresh rotation, the token
-- endpoint's checks) and exclusively by the client's deletion, each before
-- any row lock.
--
-- Why: a deletion locks the rows its cascade will delete, in the order every
-- writer takes them (src/oauth/clients.queries.ts), but only the rows its
-- snapshot sees. A refresh committed after that snapshot leaves a successor
-- token the deletion never locked; the next rotation of that token locked it
-- and waited for the grant, which the deletion held, while the deletion's
-- cascade waited for that token: a deadlock. Holding the client lock
-- exclusively, the deletion starts its statement only after every rotation
-- of the client has ended, and no rotation starts until it has.
--
-- The key is one advisory lock per client id (a hash collision only makes two
-- clients' deletions and rotations wait for each other).
CREATE FUNCTION app_client_lock_key(p_client_id text) RETURNS bigint
  LANGUAGE sql IMMUTABLE
  AS $$ SELECT hashtextextended('switchboard.oauth_client:' || p_client_id, 0) $$;

CREATE FUNCTION app_lock_client_shared(p_client_id text) RETURNS void
  LANGUAGE sql
  AS $$ SELECT pg_advisory_xact_lock_shared(app_client_lock_key(p_client_id)) $$;

CREATE FUNCTION app_lock_client(p_client_id text) RETURNS void
  LANGUAGE sql
  AS $$ SELECT pg_advisory_xact_lock(app_client_lock_key(p_client_id)) $$;

-- Migration 0014's rotation, the client lock taken first. The batch
-- (migration 0017) calls it per element, so it takes the lock too.
CREATE OR REPLACE FUNCTION app_refresh_exchange(
  p_token_hash bytea, p_client_id text, p_requested_scopes text[], p_access_scopes text[],
  p_max_lifetime_seconds integer,
  p_access_hash bytea, p_access_ttl_seconds integer,
  p_successor_id uuid, p_refresh_hash bytea, p_refresh_ttl_seconds integer, p_sealed_successor bytea
) RETURNS text[]
  LANGUAGE plpgsql
  AS $$
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
     AND NOT s.grant_revoked AND s.principal_active
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
$$;
