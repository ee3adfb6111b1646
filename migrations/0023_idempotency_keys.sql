-- Idempotency-Key (IETF httpapi draft "The Idempotency-Key HTTP Header Field")
-- on POST /calls and POST /calls/{id}/complete: a key of an organization
-- remembers, for 24 hours, the request it was first used with (as a digest)
-- and the call that request created or completed, so a retry is answered the
-- same without doing the work twice (src/calls/idempotency.ts).
--
-- A row is written by the statement that writes the call (the key and the
-- call commit together or not at all: src/calls/calls.queries.ts), and only
-- for a request that succeeded; a failed request leaves no row, so the key
-- stays free for the retry. Housekeeping deletes rows older than 24 hours;
-- until then the next request with such a key removes it and goes ahead.
--
-- The answer is not stored: it is rebuilt from the call, whose answered
-- fields do not change (a completed call is final; a call answered in
-- progress is rebuilt as it was answered). No foreign keys: their check would
-- cost every keyed call, organizations and calls are never deleted (an
-- organization is deactivated), and a row lives 24 hours.
CREATE TABLE idempotency_keys (
  organization_id uuid NOT NULL,
  -- Printable ASCII, compared byte for byte (no locale's collation to consult in the primary key).
  key             text COLLATE "C" NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
  -- SHA-256 of the endpoint and the request's fields (src/calls/idempotency.ts).
  fingerprint     bytea NOT NULL CHECK (length(fingerprint) = 32),
  -- The call the request created or completed.
  call_id         uuid NOT NULL,
  response_status smallint NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT idempotency_keys_pkey PRIMARY KEY (organization_id, key)
);
-- Rows arrive in created_at order, which is what housekeeping deletes by: a
-- block-range index finds the old ones for a fraction of a b-tree's cost per insert.
CREATE INDEX idempotency_keys_created_at_idx ON idempotency_keys USING brin (created_at);

ALTER TABLE idempotency_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE idempotency_keys FORCE ROW LEVEL SECURITY;
CREATE POLICY idempotency_keys_tenant ON idempotency_keys
  USING (organization_id = app_current_org()) WITH CHECK (organization_id = app_current_org());
-- DELETE: a request removes an expired row of its key that housekeeping has not removed yet.
GRANT SELECT, INSERT, DELETE ON idempotency_keys TO switchboard_app;
-- The owner's housekeeping reaches every row through a named policy, as on the other tenant tables (migration 0007).
DO $$
BEGIN
  EXECUTE format('CREATE POLICY idempotency_keys_owner ON idempotency_keys TO %I USING (true) WITH CHECK (true)', current_user);
END
$$;
