-- An Idempotency-Key belongs to its caller, not to the whole organization
-- (third security review, finding 1): two callers of one organization that
-- happen to use the same key get two calls, and neither is given, or told
-- about, the other's. The caller (src/calls/idempotency.ts, keyCaller):
-- 'grant:<uuid>' for a platform request (the OAuth grant its access token
-- belongs to: one client, one user), 'user:<uuid>' for x-user-token,
-- 'cli' for the command line's --idempotency-key.
--
-- Side by side with 0.1.0 during a rolling restart: 0.1.0's statements name
-- neither the column nor the key's columns in an ON CONFLICT, so they keep
-- working. Its rows get the default '' (no caller known), which no caller of
-- this release matches; its lookups by (organization_id, key) still see every
-- caller's rows, so a 0.1.0 process keeps answering as it did. Its unique
-- violations still name idempotency_keys_pkey, the name it checks for.
ALTER TABLE idempotency_keys ADD COLUMN caller text COLLATE "C" NOT NULL DEFAULT '';

-- Rebuilt under the same name. The table holds at most a day of keys.
ALTER TABLE idempotency_keys
  DROP CONSTRAINT idempotency_keys_pkey,
  ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (organization_id, caller, key);
-- One thing differs while both run: 0.1.0's hourly housekeeping deletes by
-- (organization_id, key), so an expired key also takes a same-named key
-- another caller stored within the day (that caller's retry is then carried
-- out again). It needs two callers of one organization choosing one key.
