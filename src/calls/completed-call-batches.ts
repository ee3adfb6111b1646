// Group commit (src/db/group-commit.ts) for calls recorded completed (POST
// /calls with summary and duration_seconds), like the outcome recorder
// (webhooks/delivery/recorder.ts):
// per organization, the first call is written at once, and the calls that
// arrive while that write is on its way are written together by the next one,
// in one transaction: one statement inserts them, their deliveries (the
// outbox) and one NOTIFY. A busy organization then pays one transaction, one
// commit (a WAL flush) and one notification per batch instead of per call;
// an idle one writes each call alone, at once.
//
// Durability is unchanged: a request is answered only after the transaction
// holding its call and its deliveries has committed, and nothing is held in
// memory that the client was told is stored.
//
// Every request still gets the answer it would get alone. A call whose agent
// the organization does not have (or whose Idempotency-Key it already holds)
// is left out of the batch's statement, and a batch the database refuses (a
// statement error: nothing was committed) is written again one call at a
// time; both go through the single-call path, which gives the usual answers
// (201, the 400 naming the field, or the key found held). When the
// database is unreachable (or the failure is not PostgreSQL's answer to the
// statement), the whole batch fails with that error, as each call would have
// alone: a lost connection leaves unknown whether the commit happened, and
// writing again could record a call twice.
import { randomUUID } from 'node:crypto';
import { createGroupCommit } from '../db/group-commit.ts';
import type { Pool } from '../db/pool.ts';
import { withOrgOneStatement } from '../db/with-org.ts';
import { insertCompletedCalls, type CompletedCall } from './calls.queries.ts';
import type { KeyClaim } from './idempotency.queries.ts';

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
  /** The request's Idempotency-Key, stored in the same statement (a call whose key is already held is left out). */
  idempotency?: KeyClaim | null;
}

/** The single-call path: one call in its own transaction, with the errors the API maps. */
export type WriteAlone = (organizationId: string, call: NewCompletedCall) => Promise<CompletedCall>;

export interface CompletedCallWriter {
  /** Resolves once the call and its deliveries are committed; rejects as the single-call path would. */
  write(organizationId: string, call: NewCompletedCall): Promise<CompletedCall>;
}

export function createCompletedCallWriter(pool: Pool, writeAlone: WriteAlone): CompletedCallWriter {
  return createGroupCommit<NewCompletedCall, CompletedCall>({
    alone: writeAlone,
    // A call left out of the statement (its agent is not the organization's, or its key is already held) goes alone.
    async together(organizationId, calls) {
      const ids = calls.map(() => randomUUID());
      // One round trip for BEGIN, the statement and COMMIT (withOrgOneStatement).
      const written = await withOrgOneStatement(pool, organizationId, (db) => insertCompletedCalls(db, {
        ids,
        agentIds: calls.map((call) => call.agentId),
        summaries: calls.map((call) => call.summary),
        durationsSeconds: calls.map((call) => call.durationSeconds),
        keys: calls.map((call) => call.idempotency?.key ?? null),
        fingerprints: calls.map((call) => call.idempotency?.fingerprint ?? null),
        statuses: calls.map((call) => call.idempotency?.status ?? null),
      }), { genericPlan: true });
      const byId = new Map(written.map((call) => [call.id, call]));
      return ids.map((id) => byId.get(id));
    },
  }, { maxBatch: MAX_BATCH, maxParallel: MAX_WRITING, parallelMin: SECOND_BATCH_MIN });
}
