-- Public OAuth clients (docs/interface.md §10): besides the platform clients an
-- operator registers (with a secret), MCP clients register themselves, either
-- by a Client ID Metadata Document (their client_id is the document's HTTPS
-- URL; the row is the shared cache of the document, refetched once
-- metadata_expires_at has passed) or by RFC 7591 dynamic registration. They
-- have no secret: they use PKCE always and authenticate with
-- token_endpoint_auth_method none.
ALTER TABLE oauth_clients
  ADD COLUMN kind text NOT NULL DEFAULT 'platform'
    CONSTRAINT oauth_clients_kind_check CHECK (kind IN ('platform', 'metadata_document', 'registered')),
  ADD COLUMN metadata_expires_at timestamptz,
  ALTER COLUMN secret_hash DROP NOT NULL,
  ADD CONSTRAINT oauth_clients_secret_kind_check CHECK ((kind = 'platform') = (secret_hash IS NOT NULL)),
  ADD CONSTRAINT oauth_clients_metadata_expiry_check CHECK ((kind = 'metadata_document') = (metadata_expires_at IS NOT NULL));
GRANT SELECT (kind) ON TABLE oauth_clients TO switchboard_app;

-- RFC 8707: the resource a grant's tokens are bound to (NULL: the platform
-- routes, as every grant before this migration). Always written by the server
-- (public-clients/audience.ts), never taken from a request.
ALTER TABLE oauth_grants ADD COLUMN resource text;

-- grant.created and grant.revoked name the client's kind (client_kind).
CREATE OR REPLACE FUNCTION oauth_grants_audit()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'public'
AS $function$
DECLARE
  client oauth_clients;
  actor jsonb;
BEGIN
  SELECT * INTO client FROM oauth_clients c WHERE c.id = NEW.client_id;
  IF TG_OP = 'INSERT' THEN
    PERFORM app_audit_event(NEW.organization_id, 'grant.created', 'user', NEW.user_id::text,
                            (SELECT u.email FROM users u WHERE u.id = NEW.user_id),
                            'client', client.client_id, NULL,
                            jsonb_build_object('client_name', client.name, 'client_kind', client.kind,
                                               'scopes', to_jsonb(NEW.scopes)));
    RETURN NULL;
  END IF;
  IF NEW.revoked_reason = 'user' AND nullif(current_setting('app.audit_actor', true), '') IS NOT NULL THEN
    actor := app_audit_actor();
  ELSIF NEW.revoked_reason = 'user' THEN
    actor := jsonb_build_object('type', 'user', 'id', NEW.user_id::text, 'label', (SELECT u.email FROM users u WHERE u.id = NEW.user_id));
  ELSE
    actor := jsonb_build_object('type', 'client', 'id', client.client_id, 'label', client.name);
  END IF;
  PERFORM set_config('app.audit_actor', actor::text, true);
  PERFORM app_audit_event(NEW.organization_id, 'grant.revoked', actor->>'type', actor->>'id', actor->>'label',
                          'client', client.client_id,
                          CASE NEW.revoked_reason WHEN 'user' THEN 'disconnected' WHEN 'client_revocation' THEN 'revoked'
                                                  ELSE NEW.revoked_reason END,
                          jsonb_build_object('client_name', client.name, 'client_kind', client.kind, 'user_id', NEW.user_id));
  RETURN NULL;
END
$function$;
REVOKE ALL ON FUNCTION oauth_grants_audit() FROM PUBLIC;
