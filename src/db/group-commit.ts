// Group commit: writes that arrive together share one statement and one
// transaction, so a batch pays one round trip, one commit and one WAL flush
// instead of one per item. Per key (whatever one transaction may hold
// together: an organization, say), the first item is written at once, alone;
// the items that arrive while a write is on its way wait, and the next write
// takes them together. An idle key thus writes each item alone and without
// delay; a busy one pays per batch.
//
// Each item is answered from its own write's outcome, after the commit that
// holds it: nothing is held in memory that a client was told is stored.
//
// Every item still gets the answer it would get alone:
// - an item the batch statement leaves out (undefined in its answer) goes
//   through `leftOut` (default: the single-item path);
// - a batch PostgreSQL refuses (a statement error: its transaction rolled back,
//   nothing committed — a deadlock or a constraint of one item, say) is written
//   again one item at a time through the single-item path;
// - any other failure (the database unreachable, the connection lost) fails
//   the whole batch with that error, as each item would have failed alone: it
//   is unknown whether the commit happened, and writing again could write twice.
// Used by completed calls (src/calls/completed-call-batches.ts), refresh
// rotation (src/oauth/grants/refresh-batches.ts) and the delivery worker's
// attempt outcomes (src/webhooks/worker/recorder.ts).
import pg from 'pg';
import { isDatabaseUnavailable } from './availability.ts';
import { activeTracing, type Captured } from '../tracing/tracing.ts';

export interface GroupCommitWork<I, O> {
  /**
   * The span name of a batch while traces are exported: a batch is a span of
   * its own, linked to the spans of the items it served (src/tracing).
   */
  name: string;
  /** One item in its own statement or transaction: exactly the answer it gets without batching. */
  alone(key: string, item: I): Promise<O>;
  /** Several items in one statement; per item (same order) its answer, or undefined when the statement left it out. */
  together(key: string, items: I[]): Promise<(O | undefined)[]>;
  /** An item the batch left out (nothing of it written); default `alone`. Runs after the batch committed. */
  leftOut?(key: string, item: I): Promise<O>;
}

export interface GroupCommitLimits {
  /** One statement's worth; more wait for the next batch. */
  maxBatch: number;
  /**
   * Batches of one key on their way at once (default 1): while one waits for
   * its commit, the next is already being executed. A further batch starts
   * only once `parallelMin` items wait; fewer wait for a running loop, which
   * takes them next (loops splitting a trickle would write most items alone).
   */
  maxParallel?: number;
  parallelMin?: number;
}

export interface GroupCommit<I, O> {
  /** Resolves once the item is committed; rejects as the single-item path would. */
  write(key: string, item: I): Promise<O>;
  /** Resolves when no item is waiting or being written (for a clean stop). */
  idle(): Promise<void>;
}

interface Waiting<I, O> {
  item: I;
  /** Where it was handed over, while traces are exported: an item alone is written there, a batch links to it. */
  captured?: Captured;
  resolve(value: O): void;
  reject(error: unknown): void;
}

interface Queue<I, O> {
  waiting: Waiting<I, O>[];
  /** Write loops running for this key (at most maxParallel). */
  writing: number;
}

/** An error PostgreSQL reported for the statement: its transaction is rolled back, nothing was committed. */
function refusedByDatabase(error: unknown): boolean {
  return error instanceof pg.DatabaseError && !isDatabaseUnavailable(error);
}

export function createGroupCommit<I, O>(work: GroupCommitWork<I, O>, limits: GroupCommitLimits): GroupCommit<I, O> {
  const maxParallel = limits.maxParallel ?? 1;
  const parallelMin = limits.parallelMin ?? 1;
  const leftOut = work.leftOut ?? work.alone;
  /** Keys with a write on its way, and the items waiting for their next batch. */
  const queues = new Map<string, Queue<I, O>>();
  /** Write loops running, over all keys. */
  const loops = new Set<Promise<void>>();

  const alone = (key: string, w: Waiting<I, O>) => {
    const tracing = activeTracing();
    const written = tracing ? tracing.within(w.captured, () => work.alone(key, w.item)) : work.alone(key, w.item);
    return written.then(w.resolve, w.reject);
  };

  const together = (key: string, batch: Waiting<I, O>[]) => {
    const items = batch.map((w) => w.item);
    const tracing = activeTracing();
    if (!tracing) return work.together(key, items);
    return tracing.batch(
      work.name,
      batch.map((w) => w.captured),
      async (span) => {
        span.setAttributes({ 'switchboard.batch.size': items.length });
        return work.together(key, items);
      },
    );
  };

  const writeBatch = async (key: string, batch: Waiting<I, O>[]) => {
    let answers: (O | undefined)[];
    try {
      answers = await together(key, batch);
    } catch (error) {
      if (!refusedByDatabase(error)) {
        for (const w of batch) w.reject(error);
        return;
      }
      await Promise.all(batch.map((w) => alone(key, w)));
      return;
    }
    await Promise.all(
      batch.map((w, i) => {
        const answer = answers[i];
        if (answer !== undefined) return w.resolve(answer);
        return leftOut(key, w.item).then(w.resolve, w.reject);
      }),
    );
  };

  // The emptiness check and the loop's end happen in one turn, so an item added
  // at any moment is either taken by a running loop or starts a new one.
  const drain = async (key: string, queue: Queue<I, O>) => {
    queue.writing++;
    while (queue.waiting.length) {
      const batch = queue.waiting.splice(0, limits.maxBatch);
      if (batch.length === 1) await alone(key, batch[0]!);
      else await writeBatch(key, batch);
      // The callers just answered may write again at once (a client loop), a
      // few promise steps later: a turn lets their items in before the next
      // batch is cut. Without it the loop takes whoever was waiting first and
      // a steady load splits into an item alone and a batch of the rest.
      await new Promise(setImmediate);
    }
    queue.writing--;
    if (queue.writing === 0) queues.delete(key);
  };

  return {
    write(key, item) {
      return new Promise<O>((resolve, reject) => {
        let queue = queues.get(key);
        if (!queue) {
          queue = { waiting: [], writing: 0 };
          queues.set(key, queue);
        }
        const tracing = activeTracing();
        queue.waiting.push(tracing ? { item, resolve, reject, captured: tracing.capture() } : { item, resolve, reject });
        if (queue.writing === 0 || (queue.writing < maxParallel && queue.waiting.length >= parallelMin)) {
          const loop: Promise<void> = drain(key, queue).finally(() => loops.delete(loop));
          loops.add(loop);
        }
      });
    },
    async idle() {
      while (loops.size) await Promise.all(loops);
    },
  };
}
