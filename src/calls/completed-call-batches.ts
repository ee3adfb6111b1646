// Group commit for calls recorded completed (POST /calls with summary and
// duration_seconds), like the outcome recorder (webhooks/delivery/recorder.ts):
// per organization, the first call is written at once, and the calls that
// arrive while that write is on its way are written together by the next one,
// in one transaction: one statement inserts them, their deliveries (the
// outbox) and one NOTIFY. A busy organization then pays one transaction, one
// commit (a WAL flush) and one notification per batch instead of per call;
// an idle one writes each call as before.
//
// Durability is unchanged: a request is answered only after the transaction
// holding its call and its deliveries has committed, and nothing is held in
// memory that the client was told is stored.
//
// Every request still gets the answer it would get alone. A call whose agent
// the organization does not have is left out of the batch's statement, and a
// batch the database refuses (a statement error: nothing was committed) is
// written again one call at a time; both go through the single-call path,
// which gives today's answers (201, or the 400 naming the field). When the
// database is unreachable (or the failure is not PostgreSQL's answer to the
// statement), the whole batch fails with that error, as each call would have
// alone: a lost connection leaves unknown whether the commit happened, and
// writing again could record a call twice.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { isDatabaseUnavailable } from '../db/availability.ts';
import type { Pool } from '../db/pool.ts';
import { withOrg } from '../db/with-org.ts';
import { insertCompletedCalls, type CompletedCall } from './calls.queries.ts';

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
}

/** The single-call path: one call in its own transaction, with the errors the API maps. */
export type WriteAlone = (organizationId: string, call: NewCompletedCall) => Promise<CompletedCall>;

export interface CompletedCallWriter {
  /** Resolves once the call and its deliveries are committed; rejects as the single-call path would. */
  write(organizationId: string, call: NewCompletedCall): Promise<CompletedCall>;
}

interface Waiting {
  call: NewCompletedCall;
  resolve(call: CompletedCall): void;
  reject(error: unknown): void;
}

interface Queue {
  waiting: Waiting[];
  /** Write loops running for this organization (at most MAX_WRITING). */
  writing: number;
}

/** An error PostgreSQL reported for the statement: its transaction is rolled back, nothing was committed. */
function refusedByDatabase(error: unknown): boolean {
  return error instanceof pg.DatabaseError && !isDatabaseUnavailable(error);
}

export function createCompletedCallWriter(pool: Pool, writeAlone: WriteAlone): CompletedCallWriter {
  /** Organizations with a write on its way, and the calls waiting for their next batch. */
  const queues = new Map<string, Queue>();

  const alone = (organizationId: string, w: Waiting) => writeAlone(organizationId, w.call).then(w.resolve, w.reject);

  const writeBatch = async (organizationId: string, batch: Waiting[]) => {
    const ids = batch.map(() => randomUUID());
    let written: CompletedCall[];
    try {
      written = await withOrg(pool, organizationId, (db) => insertCompletedCalls(db, {
        ids,
        agentIds: batch.map((w) => w.call.agentId),
        summaries: batch.map((w) => w.call.summary),
        durationsSeconds: batch.map((w) => w.call.durationSeconds),
      }));
    } catch (error) {
      if (!refusedByDatabase(error)) {
        for (const w of batch) w.reject(error);
        return;
      }
      await Promise.all(batch.map((w) => alone(organizationId, w)));
      return;
    }
    const byId = new Map(written.map((call) => [call.id, call]));
    await Promise.all(batch.map((w, i) => {
      const call = byId.get(ids[i]!);
      if (call) return w.resolve(call);
      return alone(organizationId, w); // left out: its agent is not the organization's
    }));
  };

  // The emptiness check and the loop's end happen in one turn, so a call added
  // at any moment is either taken by a running loop or starts a new one.
  const drain = async (organizationId: string, queue: Queue) => {
    queue.writing++;
    while (queue.waiting.length) {
      const batch = queue.waiting.splice(0, MAX_BATCH);
      if (batch.length === 1) await alone(organizationId, batch[0]!);
      else await writeBatch(organizationId, batch);
    }
    queue.writing--;
    if (queue.writing === 0) queues.delete(organizationId);
  };

  return {
    write(organizationId, call) {
      return new Promise<CompletedCall>((resolve, reject) => {
        let queue = queues.get(organizationId);
        if (!queue) {
          queue = { waiting: [], writing: 0 };
          queues.set(organizationId, queue);
        }
        queue.waiting.push({ call, resolve, reject });
        if (queue.writing === 0 || (queue.writing < MAX_WRITING && queue.waiting.length >= SECOND_BATCH_MIN)) {
          void drain(organizationId, queue);
        }
      });
    },
  };
}
