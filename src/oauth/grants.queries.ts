// Grants (one approval on the consent page) and the authorization codes that
// start them. System queries: run by the owner role before any organization
// is known, except the connected-apps ones, which run inside withOrg.
import type { Queryable } from '../db/pool.ts';
import type { ClientKind } from './clients.queries.ts';

export type RevokedReason = 'user' | 'code_replay' | 'refresh_reuse' | 'client_revocation';

export interface Grant {
  id: string;
  client_id: string;
  user_id: string;
  organization_id: string;
  scopes: string[];
  created_at: Date;
  revoked_at: Date | null;
}

export async function insertGrant(
  db: Queryable,
  grant: { clientId: string; userId: string; organizationId: string; scopes: string[]; resource: string | null },
): Promise<Grant> {
  const { rows } = await db.query<Grant>(
    `INSERT INTO oauth_grants (client_id, user_id, organization_id, scopes, resource)
     VALUES ($1, $2, $3, $4, $5)
     RETURNING id, client_id, user_id, organization_id, scopes, created_at, revoked_at`,
    [grant.clientId, grant.userId, grant.organizationId, grant.scopes, grant.resource],
  );
  return rows[0]!;
}

/** Revokes a grant and with it every code and token that points to it. Idempotent. */
export async function revokeGrant(db: Queryable, grantId: string, reason: RevokedReason): Promise<void> {
  await db.query(`UPDATE oauth_grants SET revoked_at = now(), revoked_reason = $2 WHERE id = $1 AND revoked_at IS NULL`, [grantId, reason]);
}

export async function insertAuthorizationCode(
  db: Queryable,
  code: {
    codeHash: Buffer;
    grantId: string;
    redirectUri: string;
    redirectUriGiven: boolean;
    codeChallenge: string | null;
    expiresAt: Date;
  },
): Promise<void> {
  await db.query(
    `INSERT INTO oauth_authorization_codes (code_hash, grant_id, redirect_uri, redirect_uri_given, code_challenge, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [code.codeHash, code.grantId, code.redirectUri, code.redirectUriGiven, code.codeChallenge, code.expiresAt],
  );
}

export interface AuthorizationCode {
  grant_id: string;
  client_id: string;
  user_id: string;
  organization_id: string;
  scopes: string[];
  redirect_uri: string;
  redirect_uri_given: boolean;
  code_challenge: string | null;
  expired: boolean;
  used: boolean;
  /** The grant stands (oauth_grant_status.live). */
  live: boolean;
  /** Revoked: why it does not, when it does not (else its user, organization or membership is inactive). */
  grant_revoked: boolean;
}

/**
 * The code with its grant, locked so two concurrent exchanges of one code
 * serialise: the second sees `used` and is treated as a replay.
 */
export async function lockAuthorizationCode(db: Queryable, codeHash: Buffer): Promise<AuthorizationCode | undefined> {
  const { rows } = await db.query<AuthorizationCode>(
    `SELECT s.grant_id, s.client_id, s.user_id, s.organization_id, s.scopes,
            ac.redirect_uri, ac.redirect_uri_given, ac.code_challenge,
            ac.expires_at <= now() AS expired, ac.used_at IS NOT NULL AS used,
            s.live, s.grant_revoked
       FROM oauth_authorization_codes ac
       JOIN oauth_grant_status s ON s.grant_id = ac.grant_id
      WHERE ac.code_hash = $1
      FOR UPDATE OF ac`,
    [codeHash],
  );
  return rows[0];
}

export async function markAuthorizationCodeUsed(db: Queryable, codeHash: Buffer): Promise<void> {
  await db.query('UPDATE oauth_authorization_codes SET used_at = now() WHERE code_hash = $1', [codeHash]);
}

export async function deleteExpiredAuthorizationCodes(db: Queryable, olderThan: Date): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM oauth_authorization_codes WHERE expires_at < $1', [olderThan]);
  return rowCount ?? 0;
}

export interface ConnectedApp {
  client_id: string;
  client_name: string;
  client_kind: ClientKind;
  scopes: string[];
  connected_at: Date;
  grants: number;
}

/** Tenant query (withOrg): the clients holding live grants in the current organization. */
export async function listConnectedApps(db: Queryable): Promise<ConnectedApp[]> {
  const { rows } = await db.query<ConnectedApp>(
    `SELECT c.client_id, c.name AS client_name, c.kind AS client_kind,
            array(SELECT DISTINCT s FROM oauth_grants g2 CROSS JOIN unnest(g2.scopes) s
                   WHERE g2.client_id = c.id AND g2.revoked_at IS NULL ORDER BY 1) AS scopes,
            min(g.created_at) AS connected_at, count(*)::int AS grants
       FROM oauth_grants g JOIN oauth_clients c ON c.id = g.client_id
      WHERE g.revoked_at IS NULL
      GROUP BY c.id, c.client_id, c.name, c.kind
      ORDER BY c.name, c.client_id`,
  );
  return rows;
}

/**
 * Tenant query (withOrg, one transaction): revokes every live grant of one
 * client in the current organization. Each revoked grant's trigger stops its
 * subscriptions, locking them FOR UPDATE in id order (webhooks_stop_for_grants),
 * grant after grant; so the grants, then all their subscriptions, are locked
 * first, each set in id order, as a client's deletion and recording outcomes
 * take them: grant by grant, one grant's subscriptions could be locked before
 * another's of lower id, and deadlock with either. Three statements, in the
 * order the locks are taken; a grant locked FOR UPDATE gets no new
 * subscription meanwhile (the foreign key's check waits for it).
 */
export async function revokeClientGrantsInOrg(db: Queryable, clientId: string): Promise<number> {
  const { rows: grants } = await db.query<{ id: string }>(
    `SELECT g.id FROM oauth_grants g JOIN oauth_clients c ON c.id = g.client_id
      WHERE c.client_id = $1 AND g.revoked_at IS NULL ORDER BY g.id FOR UPDATE OF g`,
    [clientId],
  );
  if (grants.length === 0) return 0;
  const ids = grants.map((grant) => grant.id);
  await db.query('SELECT s.id FROM webhook_subscriptions s WHERE s.grant_id = ANY($1::uuid[]) ORDER BY s.id FOR UPDATE', [ids]);
  const { rowCount } = await db.query(
    `UPDATE oauth_grants SET revoked_at = now(), revoked_reason = 'user' WHERE id = ANY($1::uuid[]) AND revoked_at IS NULL`,
    [ids],
  );
  return rowCount ?? 0;
}
