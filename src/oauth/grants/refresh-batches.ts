// Group commit (src/db/group-commit.ts) of refresh rotations: a refresh
// alone is app_refresh_exchange; refreshes together are
// app_refresh_exchange_batch (app_refresh_exchange per element, one
// commit), which also saves a backend wake-up per rotation.
//
// A refresh the statement declines (a rule does not hold, a replay, the same
// token earlier in the batch) goes to `decide`, the named checks in their own
// transaction, after the batch committed: every error, revocation and grace
// replay still comes from them, so each refresh gets the answer it would get
// alone. `decide` runs outside the queue, so a stream of bad or replayed
// tokens never holds up the next batch.
import { createGroupCommit, type GroupCommit } from '../../db/group-commit.ts';
import type { Pool } from '../../db/pool.ts';
import { onePerPool } from '../../db/per-pool.ts';
import { exchangeRefreshToken, exchangeRefreshTokens, type RefreshExchange } from '../tokens.queries.ts';
import type { TokenResponse } from '../tokens.service.ts';

/** One statement's worth; more wait for the next batch. */
const MAX_BATCH = 64;

export interface RefreshRequest {
  /** The inputs of app_refresh_exchange, prepared before any read. */
  exchange: RefreshExchange;
  /** The answer once rotated with these access scopes. */
  answer(scopes: string[]): TokenResponse;
  /** Declined: the named checks decide (their own transaction); throws their error. */
  decide(): Promise<TokenResponse>;
}

/** All refreshes of a process share one queue (key ''): rotations of different grants batch together. */
const KEY = '';

/** A rotated pair, or null: declined, the named checks must decide. */
type Exchanged = TokenResponse | null;

/** One batcher per pool: the refreshes through one pool share its batches. */
const refreshBatcher = onePerPool(
  (pool: Pool): GroupCommit<RefreshRequest, Exchanged> =>
    createGroupCommit<RefreshRequest, Exchanged>(
      {
        name: 'rotate refresh tokens',
        async alone(_key, request) {
          const scopes = await exchangeRefreshToken(pool, request.exchange);
          return scopes ? request.answer(scopes) : null;
        },
        async together(_key, requests) {
          const scopes = await exchangeRefreshTokens(
            pool,
            requests.map((r) => r.exchange),
          );
          return requests.map((request, i) => (scopes[i] ? request.answer(scopes[i]) : null));
        },
      },
      { maxBatch: MAX_BATCH },
    ),
);

/** Resolves with the rotated pair (or the checks' answer); rejects with the checks' error. */
export async function refreshInBatch(pool: Pool, request: RefreshRequest): Promise<TokenResponse> {
  // Declined: decided after the commit that held the batch, outside the queue.
  return (await refreshBatcher(pool).write(KEY, request)) ?? request.decide();
}
