-- One definition of "this grant still stands for an active principal": the
-- grant's client, and whether its user, organization and membership are all
-- active. The code exchange, the refresh and the access-token check (the
-- platform guard's hot path) all read it, so deactivation means the same
-- thing everywhere.
CREATE VIEW oauth_grant_status AS
SELECT g.id AS grant_id,
       c.client_id,
       c.secret_hash AS client_secret_hash,
       g.user_id,
       u.email,
       u.name AS user_name,
       g.organization_id,
       o.name AS organization_name,
       g.scopes,
       g.revoked_at IS NOT NULL AS grant_revoked,
       (u.active AND o.active AND m.user_id IS NOT NULL) AS principal_active
  FROM oauth_grants g
  JOIN oauth_clients c ON c.id = g.client_id
  JOIN users u ON u.id = g.user_id
  JOIN organizations o ON o.id = g.organization_id
  LEFT JOIN memberships m ON m.user_id = g.user_id AND m.organization_id = g.organization_id;
