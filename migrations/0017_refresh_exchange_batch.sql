-- Concurrent refreshes rotated together (goal: ≥ 1,000 rotations/s with
-- a margin). The token endpoint batches the refreshes that arrive while one
-- is on its way (src/oauth/grants/refresh-batches.ts, group commit as for
-- completed calls): one statement and one commit for the batch instead of a
-- round trip (waking a backend) and a WAL flush per rotation.
--
-- Element i of every array is one refresh: exactly the inputs of
-- app_refresh_exchange (migration 0014), which runs for each element in turn,
-- so every rule it checks holds per element and nothing of its logic is
-- copied. Two of them per element travel as text because a PostgreSQL array
-- cannot hold arrays of different lengths or a NULL array: the requested
-- scope and the access token's scope, each space-separated (a scope token
-- never contains a space: src/oauth/scopes.ts parseScope splits on it) or
-- NULL for "none named".
--
-- Returns one row per element: its position (1-based) and the access token's
-- scopes, or NULL when app_refresh_exchange declined it (nothing of that
-- element written; the caller runs the named checks for it after this
-- statement committed). The same token twice in one batch: the first rotates
-- it, the second finds it rotated in this very transaction and declines, and
-- its checks then see the first rotation committed (a grace replay of the
-- same successor, never a second one).
--
-- Tokens are locked in the order of their hashes, whatever the order of the
-- requests, so two batches (of two processes) sharing tokens wait for each
-- other instead of deadlocking; a deadlock with another transaction still
-- rolls the whole statement back, and the caller then refreshes each element
-- alone.
CREATE FUNCTION app_refresh_exchange_batch(
  p_token_hashes bytea[], p_client_ids text[], p_requested_scopes text[], p_access_scopes text[],
  p_max_lifetime_seconds integer[],
  p_access_hashes bytea[], p_access_ttl_seconds integer[],
  p_successor_ids uuid[], p_refresh_hashes bytea[], p_refresh_ttl_seconds integer[], p_sealed_successors bytea[]
) RETURNS TABLE (element integer, access_scopes text[])
  LANGUAGE plpgsql
  AS $$
DECLARE
  i integer;
BEGIN
  FOR i IN
    SELECT u.i::integer FROM unnest(p_token_hashes) WITH ORDINALITY AS u(token_hash, i) ORDER BY u.token_hash, u.i
  LOOP
    element := i;
    access_scopes := app_refresh_exchange(
      p_token_hashes[i], p_client_ids[i],
      string_to_array(p_requested_scopes[i], ' '), string_to_array(p_access_scopes[i], ' '),
      p_max_lifetime_seconds[i],
      p_access_hashes[i], p_access_ttl_seconds[i],
      p_successor_ids[i], p_refresh_hashes[i], p_refresh_ttl_seconds[i], p_sealed_successors[i]);
    RETURN NEXT;
  END LOOP;
END
$$;
