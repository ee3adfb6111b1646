// Housekeeping: codes and tokens that can no longer authenticate anything are
// deleted a day after they expire (the day keeps a just-expired code's replay
// recognisable as a replay).
import type { Pool } from '../db/pool.ts';
import { deleteExpiredAuthorizationCodes } from './grants.queries.ts';
import { deleteExpiredAccessTokens, deleteExpiredRefreshTokens } from './tokens.queries.ts';

const KEEP_MS = 24 * 3600_000;

export async function purgeExpiredOAuthRows(pool: Pool): Promise<number> {
  const before = new Date(Date.now() - KEEP_MS);
  return (await deleteExpiredAuthorizationCodes(pool, before))
    + (await deleteExpiredAccessTokens(pool, before))
    + (await deleteExpiredRefreshTokens(pool, before));
}
