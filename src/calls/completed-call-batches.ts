// How POST /calls writes a call recorded completed (summary and
// duration_seconds given): through the group commit of src/db/group-commit.ts,
// keyed by organization, since a transaction sets one organization for
// row-level security. Both writes live here:
// - the single write: one call, its call.completed deliveries (the outbox)
//   and its NOTIFY, in its own transaction;
// - the batch write: the calls that arrived while a write was on its way, in
//   one statement (their deliveries and one NOTIFY included), in one
//   transaction.
// Each sends BEGIN, the statement and COMMIT in one round trip
// (withOrgOneStatement), on the statement's generic plan.
//
// The batch statement leaves out a call whose agent the organization does not
// have, or whose Idempotency-Key its caller already holds; such a call then goes
// through the single write, which answers it as it would alone (the foreign
// key's error, or KeyHeld).
import { randomUUID } from 'node:crypto';
import { createGroupCommit } from '../db/group-commit.ts';
import { onePerPool } from '../db/per-pool.ts';
import type { Pool } from '../db/pool.ts';
import { withOrgOneStatement } from '../db/with-org.ts';
import type { CompletedCall } from './call.ts';
import { insertCompletedCall, insertCompletedCalls } from './completed-calls.queries.ts';
import type { KeyReservation } from './idempotency.queries.ts';
import type { CallDetails } from './call-details.ts';
import { newTraceContext, type StoredTraceContext } from '../tracing/trace-context.ts';

/** One statement's worth; more wait for the next batch. */
const MAX_BATCH = 64;
/**
 * Batches of one organization on their way at once: while one waits for its
 * commit (the WAL flush), the next is already being executed. The second
 * starts only once this many calls wait; fewer wait for the running one,
 * which takes them next (two loops splitting a trickle would write most
 * calls alone, each with its own transaction).
 */
const MAX_WRITING = 2;
const SECOND_BATCH_MIN = 16;

export interface NewCompletedCall {
  agentId: string | null;
  summary: string;
  durationSeconds: number;
  details?: CallDetails | undefined;
  /** The trace context kept with the call (src/tracing/trace-context.ts); unset: a new trace. */
  traceContext?: StoredTraceContext;
  /** The request's Idempotency-Key, stored in the same statement (a call whose key is already held is left out). */
  idempotency?: KeyReservation | null;
}

function createCompletedCallWriter(pool: Pool) {
  return createGroupCommit<NewCompletedCall, CompletedCall>(
    {
      name: 'write completed calls',
      alone: (organizationId, call) =>
        withOrgOneStatement(pool, organizationId, (db) => insertCompletedCall(db, call), { genericPlan: true }),
      async together(organizationId, calls) {
        const ids = calls.map(() => randomUUID());
        const written = await withOrgOneStatement(
          pool,
          organizationId,
          (db) =>
            insertCompletedCalls(db, {
              ids,
              agentIds: calls.map((call) => call.agentId),
              summaries: calls.map((call) => call.summary),
              durationsSeconds: calls.map((call) => call.durationSeconds),
              callers: calls.map((call) => call.idempotency?.caller ?? null),
              keys: calls.map((call) => call.idempotency?.key ?? null),
              fingerprints: calls.map((call) => call.idempotency?.fingerprint ?? null),
              statuses: calls.map((call) => call.idempotency?.status ?? null),
              traceContexts: calls.map((call) => call.traceContext ?? newTraceContext()),
              details: calls.map((call) => call.details ?? {}),
            }),
          { genericPlan: true },
        );
        const byId = new Map(written.map((call) => [call.id, call]));
        return ids.map((id) => byId.get(id));
      },
    },
    { maxBatch: MAX_BATCH, maxParallel: MAX_WRITING, parallelMin: SECOND_BATCH_MIN },
  );
}

/** One writer per pool (per process, in practice): everything writing through a pool shares its batches. */
const writerOf = onePerPool(createCompletedCallWriter);

/**
 * Writes a completed call with its deliveries. Resolves once they are
 * committed; rejects as the single write would: PostgreSQL's error (a foreign
 * key naming the agent, say), or KeyHeld.
 */
export function writeCompletedCall(pool: Pool, organizationId: string, call: NewCompletedCall): Promise<CompletedCall> {
  return writerOf(pool).write(organizationId, call);
}
