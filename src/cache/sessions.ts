// The session behind an x-user-token, from the process cache when it holds
// it; the expiry is checked on every use.
import { findActiveSession, type ActiveSession } from '../auth/sessions.queries.ts';
import { hashToken } from '../auth/tokens.ts';
import type { Queryable } from '../db/pool.ts';
import { sessionTags, type ProcessCaches } from './process-caches.ts';

export async function resolveSessionCached(caches: ProcessCaches, db: Queryable, token: string): Promise<ActiveSession | undefined> {
  const tokenHash = hashToken(token);
  const key = tokenHash.toString('hex');
  const hit = caches.sessions.get(key);
  if (hit && hit.expires_at.getTime() > Date.now()) return hit;
  const ticket = caches.sessions.ticket();
  const session = await findActiveSession(db, tokenHash);
  if (session) caches.sessions.set(key, session, sessionTags(session), ticket);
  return session;
}
