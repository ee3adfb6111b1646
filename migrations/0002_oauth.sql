-- OAuth 2.0 authorization server: clients, grants, authorization codes,
-- access and refresh tokens (docs/interface.md §10).
--
-- Every secret (client secret, code, access token, refresh token) is kept only
-- as its SHA-256 hash. A grant is one approval on the consent page: one code,
-- and every token ever issued from that code (refreshes included) points to it,
-- so revoking the grant revokes the whole family at once (code replay, refresh
-- reuse after the grace period, "revoke" on the connected-apps page).
--
-- Tokens and codes are read before any organization is known (the bearer token
-- is what tells us the organization), so they are system tables reached by the
-- owner role. Grants are also tenant data (the connected-apps page lists and
-- revokes them), so they carry a row-level policy for switchboard_app.

CREATE TABLE oauth_clients (
  id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  client_id         text NOT NULL,
  secret_hash       bytea NOT NULL CHECK (length(secret_hash) = 32),
  name              text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  redirect_uris     text[] NOT NULL CHECK (cardinality(redirect_uris) >= 1),
  scopes            text[] NOT NULL CHECK (cardinality(scopes) >= 1),
  created_at        timestamptz NOT NULL DEFAULT now(),
  secret_rotated_at timestamptz,
  CONSTRAINT oauth_clients_client_id_key UNIQUE (client_id)
);

CREATE TABLE oauth_grants (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  client_id       uuid NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
  user_id         uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  scopes          text[] NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  revoked_at      timestamptz,
  revoked_reason  text CHECK (revoked_reason IN ('user', 'code_replay', 'refresh_reuse', 'client_revocation'))
);
CREATE INDEX oauth_grants_client_id_idx ON oauth_grants (client_id);
CREATE INDEX oauth_grants_user_id_idx ON oauth_grants (user_id);
CREATE INDEX oauth_grants_organization_id_idx ON oauth_grants (organization_id, client_id) WHERE revoked_at IS NULL;

ALTER TABLE oauth_grants ENABLE ROW LEVEL SECURITY;
CREATE POLICY oauth_grants_tenant ON oauth_grants
  USING (organization_id = app_current_org())
  WITH CHECK (organization_id = app_current_org());
GRANT SELECT, UPDATE ON oauth_grants TO switchboard_app;
-- The connected-apps page names the client; nothing else of a client is tenant-visible.
GRANT SELECT (id, client_id, name) ON oauth_clients TO switchboard_app;

CREATE TABLE oauth_authorization_codes (
  code_hash          bytea PRIMARY KEY CHECK (length(code_hash) = 32),
  grant_id           uuid NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
  redirect_uri       text NOT NULL,
  -- RFC 6749 §4.1.3: the token request must repeat redirect_uri only when the
  -- authorization request carried it.
  redirect_uri_given boolean NOT NULL,
  code_challenge     text,
  expires_at         timestamptz NOT NULL,
  used_at            timestamptz,
  created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_authorization_codes_grant_id_idx ON oauth_authorization_codes (grant_id);
CREATE INDEX oauth_authorization_codes_expires_at_idx ON oauth_authorization_codes (expires_at);

CREATE TABLE oauth_access_tokens (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  token_hash bytea NOT NULL CHECK (length(token_hash) = 32),
  grant_id   uuid NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
  scopes     text[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz,
  CONSTRAINT oauth_access_tokens_token_hash_key UNIQUE (token_hash)
);
CREATE INDEX oauth_access_tokens_grant_id_idx ON oauth_access_tokens (grant_id);
CREATE INDEX oauth_access_tokens_expires_at_idx ON oauth_access_tokens (expires_at);

CREATE TABLE oauth_refresh_tokens (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  token_hash  bytea NOT NULL CHECK (length(token_hash) = 32),
  grant_id    uuid NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
  scopes      text[] NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  -- Set when this token was exchanged for a new one; it keeps working for
  -- REFRESH_REUSE_GRACE seconds after that, then its use revokes the grant.
  rotated_at  timestamptz,
  revoked_at  timestamptz,
  CONSTRAINT oauth_refresh_tokens_token_hash_key UNIQUE (token_hash)
);
CREATE INDEX oauth_refresh_tokens_grant_id_idx ON oauth_refresh_tokens (grant_id);
CREATE INDEX oauth_refresh_tokens_expires_at_idx ON oauth_refresh_tokens (expires_at);
