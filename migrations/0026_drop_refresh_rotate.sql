-- app_refresh_rotate (migration 0012) rotated a refresh token after a
-- separate read; app_refresh_exchange (migration 0014) does it in one
-- statement, and nothing calls the older function.
DROP FUNCTION app_refresh_rotate(uuid, uuid, bytea, text[], timestamptz, bytea, timestamptz, integer, bytea);
