-- Failed sign-in attempts, counted per subject for the login throttle
-- (src/auth/login-throttle.ts): 'email:<sha256 of the lower-cased email>' or
-- 'ip:<client address>'. A system table: read before anyone is signed in.
CREATE TABLE login_failures (
  subject           text PRIMARY KEY,
  failures          integer NOT NULL CHECK (failures > 0),
  window_started_at timestamptz NOT NULL,
  window_seconds    integer NOT NULL CHECK (window_seconds > 0)
);
CREATE INDEX login_failures_window_started_at_idx ON login_failures (window_started_at);
