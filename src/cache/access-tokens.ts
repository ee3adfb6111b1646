// The access token behind a bearer credential, from the process cache when it
// holds it. Only what PostgreSQL answered for a valid token is kept; the
// expiry is checked here on every use, and the caller still checks the
// client's id, its secret (constant time, against the cached hash) and the
// scope on every request.
import { hashToken } from '../auth/tokens.ts';
import type { Queryable } from '../db/pool.ts';
import { findActiveAccessToken, type ActiveAccessToken } from '../oauth/tokens.queries.ts';
import { accessTokenTags, type ProcessCaches } from './process-caches.ts';

export async function cachedAccessToken(caches: ProcessCaches, db: Queryable, tokenHash: Buffer): Promise<ActiveAccessToken | undefined> {
  const key = tokenHash.toString('hex');
  const hit = caches.accessTokens.get(key);
  if (hit && hit.expires_at.getTime() > Date.now()) return hit;
  const ticket = caches.accessTokens.ticket();
  const active = await findActiveAccessToken(db, tokenHash);
  if (active) caches.accessTokens.set(key, active, accessTokenTags(active), ticket);
  return active;
}

/** resolveAccessToken (tokens.service.ts) through the cache. */
export function resolveAccessTokenCached(caches: ProcessCaches, db: Queryable, accessToken: string): Promise<ActiveAccessToken | undefined> {
  if (accessToken.length === 0 || accessToken.length > 512) return Promise.resolve(undefined);
  return cachedAccessToken(caches, db, hashToken(accessToken));
}
