// How a grant type decides on its locked row. A failed check may ask for the
// grant to be revoked (code replay, late refresh reuse); that revocation must
// be committed, so failures come back from the transaction as values and are
// thrown after it, once this process has forgotten the revoked grant's tokens.
import type { Caches } from '../../cache/caches.ts';
import { tags } from '../../cache/tags.ts';
import type { Pool, PoolClient, Queryable } from '../../db/pool.ts';
import { withTransaction } from '../../db/transaction.ts';
import { runChecks } from '../checks/index.ts';
import { lockClientShared } from '../clients.queries.ts';
import { revokeGrant } from '../grants.queries.ts';
import { OAuthError } from '../oauth.errors.ts';

/**
 * Runs `work` in a transaction holding the client lock shared (taken first,
 * before any row, app_lock_client_shared: the client's deletion waits for it); an
 * OAuthError it returns is thrown after the commit.
 */
export async function inGrantTransaction<T>(
  pool: Pool,
  caches: Caches,
  clientId: string,
  work: (tx: PoolClient) => Promise<T | OAuthError>,
): Promise<T> {
  const outcome = await withTransaction<T | OAuthError>(pool, async (tx) => {
    await lockClientShared(tx, clientId);
    return work(tx);
  });
  if (outcome instanceof OAuthError) {
    // A revocation a failed check made is committed now: this process forgets the grant's tokens at once.
    if (outcome.revokedGrantId) caches.evict([tags.grant(outcome.revokedGrantId)]);
    throw outcome;
  }
  return outcome;
}

/** The first check that fails, after making the revocation it asks for; undefined when every check passes. */
export async function failedCheck<C>(
  tx: Queryable,
  checks: readonly ((ctx: C) => void | Promise<void>)[],
  ctx: C,
  grantId: string,
): Promise<OAuthError | undefined> {
  try {
    await runChecks(checks, ctx);
    return undefined;
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    if (error.revokeGrant) {
      await revokeGrant(tx, grantId, error.revokeGrant);
      error.revokedGrantId = grantId;
    }
    return error;
  }
}
