-- One key scheme for every advisory lock of the database: two int4 keys, the
-- lock's class (app_lock_class, the list of every lock) and the hash of the
-- id it guards (app_lock_id: the hash PostgreSQL's hash indexes use for the
-- id's type, uuid_hash or hashtext). Two keys, not one bigint: pg_locks shows
-- the class (classid, objsubid 2), so a waiting lock says which one it is, and
-- no two kinds of lock can share a key. A hash collision within a class only
-- makes two ids wait for each other. Each class is four ASCII letters read as
-- an int4. docs/delivery-engine.md ("Locks") says who takes each and in what
-- order; src/db/advisory-locks.ts is what the code calls.

-- Names no lock: nothing must go unlocked because of a misspelt name.
CREATE FUNCTION app_lock_unknown(p_lock text) RETURNS integer
  LANGUAGE plpgsql IMMUTABLE
  AS $$ BEGIN RAISE EXCEPTION 'no advisory lock is named %', p_lock; END $$;

CREATE FUNCTION app_lock_class(p_lock text) RETURNS integer
  LANGUAGE sql IMMUTABLE
  AS $$ SELECT CASE p_lock
    -- Session-level, by src/db/migrate.ts, which takes it before this
    -- function exists and so writes the same number.
    WHEN 'migrations' THEN x'53574d47'::int            -- "SWMG"
    -- A subscription's claims, per subscription id (0.1.0's key too).
    WHEN 'claim' THEN x'53574843'::int                 -- "SWHC"
    -- An OAuth client's deletion and its rotations, per client_id.
    WHEN 'client' THEN x'53574f43'::int                -- "SWOC"
    -- Adding an organization's active subscriptions, per organization id.
    WHEN 'active_subscriptions' THEN x'53574153'::int  -- "SWAS"
    -- Marking an organization's primary location, per organization id.
    WHEN 'primary_location' THEN x'53574c50'::int      -- "SWLP"
    ELSE app_lock_unknown(p_lock) END $$;

CREATE FUNCTION app_lock_id(p_id uuid) RETURNS integer
  LANGUAGE sql IMMUTABLE
  AS $$ SELECT uuid_hash(p_id) $$;

CREATE FUNCTION app_lock_id(p_id text) RETURNS integer
  LANGUAGE sql IMMUTABLE
  AS $$ SELECT hashtext(p_id) $$;

-- Transaction-level: exclusive, waiting for a holder.
CREATE FUNCTION app_lock(p_lock text, p_id uuid) RETURNS void
  LANGUAGE sql
  AS $$ SELECT pg_advisory_xact_lock(app_lock_class(p_lock), app_lock_id(p_id)) $$;

CREATE FUNCTION app_lock(p_lock text, p_id text) RETURNS void
  LANGUAGE sql
  AS $$ SELECT pg_advisory_xact_lock(app_lock_class(p_lock), app_lock_id(p_id)) $$;

-- Transaction-level, shared, waiting for an exclusive holder.
CREATE FUNCTION app_lock_shared(p_lock text, p_id text) RETURNS void
  LANGUAGE sql
  AS $$ SELECT pg_advisory_xact_lock_shared(app_lock_class(p_lock), app_lock_id(p_id)) $$;

-- Transaction-level, exclusive, if free: true if taken; never waits.
CREATE FUNCTION app_try_lock(p_lock text, p_id uuid) RETURNS boolean
  LANGUAGE sql
  AS $$ SELECT pg_try_advisory_xact_lock(app_lock_class(p_lock), app_lock_id(p_id)) $$;

-- The client lock under the scheme; the refresh rotation (app_refresh_exchange)
-- and the client's deletion call these by name.
CREATE OR REPLACE FUNCTION app_lock_client_shared(p_client_id text) RETURNS void
  LANGUAGE sql
  AS $$ SELECT app_lock_shared('client', p_client_id) $$;

CREATE OR REPLACE FUNCTION app_lock_client(p_client_id text) RETURNS void
  LANGUAGE sql
  AS $$ SELECT app_lock('client', p_client_id) $$;

DROP FUNCTION app_client_lock_key(text);
