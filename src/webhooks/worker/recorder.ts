// Records attempt outcomes through a group commit (src/db/group-commit.ts),
// one queue for all of a worker's outcomes: a busy worker records a batch in
// one statement instead of a transaction of four statements per attempt, and
// one outcome the database will not take does not cost the others their
// record (and their deliveries a resend).
//
// Nothing is lost to a crash that a per-attempt write would have kept: an
// outcome waiting here belongs to a delivery whose lease is committed in the
// database, so after a crash the lease runs out, the delivery is claimed
// again, the lost attempt is logged as 'lease_expired' and the delivery is
// sent again with the same X-Delivery-Id (at-least-once). The
// batch writes fit well inside the lease: attempts are cut at
// WEBHOOK_TIMEOUT_MS and the lease lasts RECORD_MARGIN_MS longer at least.
import { createGroupCommit } from '../../db/group-commit.ts';
import type { Pool } from '../../db/pool.ts';
import { healthPolicy, type HealthPolicy } from './endpoint-health.ts';
import { recordOutcomes, type OutcomeRecord, type RecordedOutcome } from './record.queries.ts';
import { DISABLE_AFTER_FAILING_MS } from './retry-policy.ts';

/** More than a worker's concurrency, so one statement takes everything that finished meanwhile. */
const MAX_BATCH = 256;
/**
 * Batches on their way at once. While one waits for its commit's flush, the
 * next is already executing, and PostgreSQL flushes the two commits together:
 * with one batch at a time, a busy worker's outcomes waited for their turn,
 * holding their subscription's slot all the while
 * (docs/performance.md). A second batch starts only once PARALLEL_MIN outcomes
 * wait, so a trickle is still written by one loop, in as few statements as it can.
 * (Each statement has a fixed cost, its subscriptions' locks and health: under a
 * burst, 16 gives fewer, larger batches than 8 and 3–5 % more deliveries a second.)
 */
const MAX_PARALLEL = 2;
export const PARALLEL_MIN = 16;
/** One queue for the worker's outcomes: they share a pool, not an organization. */
const KEY = '';

export interface OutcomeRecorder {
  /** Resolves once the outcome is committed (or rejects if it could not be written). */
  record(outcome: OutcomeRecord): Promise<RecordedOutcome>;
  /** Resolves when nothing is waiting or being written. */
  idle(): Promise<void>;
}

export interface RecorderOptions {
  /** The statement fails after that long without an answer (a connection that died silently), as the claim's do. */
  deadlineMs?: number;
  /** The endpoint-health limits; unset: the defaults with a one-minute circuit wait. */
  policy?: HealthPolicy;
}

/** Writes one batch in one statement (a 410's subscription removal included). */
export function writeOutcomes(pool: Pool, outcomes: OutcomeRecord[], options: RecorderOptions = {}): Promise<RecordedOutcome[]> {
  return recordOutcomes(pool, {
    records: outcomes,
    disableAfterMs: DISABLE_AFTER_FAILING_MS,
    policy: options.policy ?? healthPolicy([]),
    deadlineMs: options.deadlineMs,
  });
}

export function createOutcomeRecorder(pool: Pool, options: RecorderOptions = {}): OutcomeRecorder {
  const batches = createGroupCommit<OutcomeRecord, RecordedOutcome>(
    {
      name: 'record delivery outcomes',
      alone: async (_key, outcome) => (await writeOutcomes(pool, [outcome], options))[0]!,
      together: (_key, outcomes) => writeOutcomes(pool, outcomes, options),
    },
    { maxBatch: MAX_BATCH, maxParallel: MAX_PARALLEL, parallelMin: PARALLEL_MIN },
  );
  return {
    record: (outcome) => batches.write(KEY, outcome),
    idle: () => batches.idle(),
  };
}
