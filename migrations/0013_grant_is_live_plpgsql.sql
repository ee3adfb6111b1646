-- app_grant_is_live (migration 0007) in PL/pgSQL, same signature, same test,
-- same rights. As a LANGUAGE sql function with a SET clause it cannot be
-- inlined, and PostgreSQL plans a SQL function's body again for every
-- statement that calls it: the outbox insert of every completed call planned
-- the oauth_grant_status join (more CPU than the rest of the statement). PL/pgSQL keeps the plan for the life of the connection.
-- Nothing is cached but the plan: every call still reads the grant, its
-- user, membership and organization as they are now.
CREATE OR REPLACE FUNCTION app_grant_is_live(grant_id uuid) RETURNS boolean
  LANGUAGE plpgsql STABLE SECURITY DEFINER
  SET search_path = pg_catalog, public
  AS $$
BEGIN
  RETURN EXISTS (SELECT 1 FROM oauth_grant_status s
                  WHERE s.grant_id = $1 AND s.organization_id = app_current_org()
                    AND NOT s.grant_revoked AND s.principal_active);
END
$$;
REVOKE ALL ON FUNCTION app_grant_is_live(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION app_grant_is_live(uuid) TO switchboard_app;
