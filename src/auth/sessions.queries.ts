import type { Queryable } from '../db/pool.ts';
import type { Role, UserInOrganization } from '../organizations/users.queries.ts';

export interface ActiveSession extends UserInOrganization {
  session_id: string;
  expires_at: Date;
  role: Role;
}

export async function insertSession(
  db: Queryable,
  session: { tokenHash: Buffer; userId: string; organizationId: string; expiresAt: Date },
): Promise<{ id: string; expires_at: Date }> {
  const { rows } = await db.query<{ id: string; expires_at: Date }>(
    `INSERT INTO user_sessions (token_hash, user_id, organization_id, expires_at)
     VALUES ($1, $2, $3, $4) RETURNING id, expires_at`,
    [session.tokenHash, session.userId, session.organizationId, session.expiresAt],
  );
  return rows[0]!;
}

/**
 * The one query behind every x-user-token request (app_active_session):
 * the session exists and is unexpired, and its user,
 * organization and membership are all still active. Deactivation takes
 * effect on the next request that reaches it; the process caches
 * (src/cache) are evicted by the *_cache_* triggers' notifications.
 */
export async function findActiveSession(db: Queryable, tokenHash: Buffer): Promise<ActiveSession | undefined> {
  const { rows } = await db.query<ActiveSession>('SELECT * FROM app_active_session($1)', [tokenHash]);
  return rows[0];
}

export async function updateSessionOrganization(db: Queryable, sessionId: string, organizationId: string): Promise<void> {
  await db.query('UPDATE user_sessions SET organization_id = $2 WHERE id = $1', [sessionId, organizationId]);
}

export async function deleteSession(db: Queryable, sessionId: string): Promise<void> {
  await db.query('DELETE FROM user_sessions WHERE id = $1', [sessionId]);
}

export async function deleteExpiredSessions(db: Queryable): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM user_sessions WHERE expires_at <= now()');
  return rowCount ?? 0;
}
