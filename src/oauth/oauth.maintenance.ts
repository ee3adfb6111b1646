// Housekeeping: codes and tokens that can no longer authenticate anything are
// deleted a day after they expire (the day keeps a just-expired code's replay
// recognisable as a replay).
import type { Pool } from '../db/pool.ts';
import { HOURLY_MS, type PeriodicJob } from '../tasks/task.ts';
import { deleteUnusedRegistrations } from './clients.queries.ts';
import { deleteExpiredAuthorizationCodes } from './grants.queries.ts';
import { REGISTRATION_UNUSED_DAYS } from './public-clients/registration.service.ts';
import { deleteExpiredAccessTokens, deleteExpiredRefreshTokens, forgetSealedSuccessors } from './tokens.queries.ts';

const KEEP_MS = 24 * 3600_000;

/**
 * `graceSeconds` (REFRESH_REUSE_GRACE): a rotated refresh token's sealed
 * successor is forgotten once the grace is over, so the database holds a
 * recoverable refresh token only for the seconds a retry may need it.
 */
export async function purgeExpiredOAuthRows(pool: Pool, graceSeconds = 3600): Promise<number> {
  const before = new Date(Date.now() - KEEP_MS);
  return (
    (await forgetSealedSuccessors(pool, graceSeconds)) +
    (await deleteExpiredAuthorizationCodes(pool, before)) +
    (await deleteExpiredAccessTokens(pool, before)) +
    (await deleteExpiredRefreshTokens(pool, before)) +
    (await deleteUnusedRegistrations(pool, new Date(Date.now() - REGISTRATION_UNUSED_DAYS * KEEP_MS)))
  );
}

export function oauthHousekeeping({ pool, refreshReuseGrace }: { pool: Pool; refreshReuseGrace: number }): PeriodicJob[] {
  return [{ name: 'oauth-cleanup', everyMs: HOURLY_MS, run: () => purgeExpiredOAuthRows(pool, refreshReuseGrace) }];
}
