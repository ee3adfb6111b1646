-- Idempotency-Key (IETF httpapi draft "The Idempotency-Key HTTP Header Field")
-- on POST /calls and POST /calls/{id}/complete: a key of an organization
-- remembers, for 24 hours, the request it was first used with (as a digest)
-- and the answer that request got, so a retry is answered the same without
-- doing the work twice.
--
-- A row is written by the statement that records the call (the key and the
-- call commit together or not at all: src/calls/calls.queries.ts), and only
-- for a request that succeeded; a failed request leaves no row, so the key
-- stays free for the retry. Housekeeping deletes rows older than 24 hours
-- (src/calls/idempotency.ts); until then such a row is taken over by the
-- next request with its key.
CREATE TABLE idempotency_keys (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  key             text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
  -- SHA-256 of the endpoint and the request's fields (src/calls/idempotency.ts).
  fingerprint     bytea NOT NULL CHECK (length(fingerprint) = 32),
  -- The call the request created or completed.
  call_id         uuid NOT NULL,
  response_status smallint NOT NULL,
  response_body   jsonb NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT idempotency_keys_pkey PRIMARY KEY (organization_id, key)
);
CREATE INDEX idempotency_keys_created_at_idx ON idempotency_keys (created_at);

ALTER TABLE idempotency_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE idempotency_keys FORCE ROW LEVEL SECURITY;
CREATE POLICY idempotency_keys_tenant ON idempotency_keys
  USING (organization_id = app_current_org()) WITH CHECK (organization_id = app_current_org());
-- UPDATE: an expired row is taken over in place (INSERT … ON CONFLICT DO UPDATE).
GRANT SELECT, INSERT, UPDATE ON idempotency_keys TO switchboard_app;
-- The owner's housekeeping reaches every row through a named policy, as on the other tenant tables (migration 0007).
DO $$
BEGIN
  EXECUTE format('CREATE POLICY idempotency_keys_owner ON idempotency_keys TO %I USING (true) WITH CHECK (true)', current_user);
END
$$;
