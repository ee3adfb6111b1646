import { isDatabaseUnavailable } from './availability.ts';
import type { Pool, PoolClient, Queryable } from './pool.ts';

/**
 * Runs fn in one transaction on one connection; commits on success, rolls back
 * on any throw. `begin` may carry statements that open the transaction in the
 * same round trip (see withOrg).
 */
export async function withTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>, begin = 'BEGIN'): Promise<T> {
  const client = await pool.connect();
  let result: T;
  try {
    await client.query(begin);
    result = await fn(client);
    await client.query('COMMIT');
  } catch (error) {
    await abandon(client, error);
    throw error;
  }
  client.release();
  return result;
}

/**
 * Hands back the connection of a transaction that failed, with nothing of it
 * committed. A connection that failed (or went silent: a deadline passed) is
 * dropped, not handed to the next request, and gets no ROLLBACK, which would
 * wait behind the unanswered query (the server rolls back when the connection
 * goes); any other gets a ROLLBACK, so no transaction is left open on it.
 */
async function abandon(client: PoolClient, failure: unknown): Promise<void> {
  if (isDatabaseUnavailable(failure)) {
    client.release(failure as Error);
    return;
  }
  await client.query('ROLLBACK').catch(() => {});
  client.release();
}

/**
 * One statement in its own transaction, in one round trip: BEGIN (with
 * `begin`'s statements), the statement and COMMIT are written together, and
 * PostgreSQL runs them in order without waiting for the client between them
 * (pg's pipelining, switched on for this transaction only). Under load a round
 * trip costs the wait for two processes to be scheduled, not the network, so
 * group commit's batches (src/db/group-commit.ts) spend less time per batch
 * between statements: docs/performance.md, "The design choices behind these
 * figures" of `bench:api`.
 *
 * Same outcome as withTransaction: the result is returned once COMMIT has
 * answered (the commit is flushed). When BEGIN or the statement fails, the
 * transaction is aborted and the COMMIT behind it only ends it (PostgreSQL
 * answers ROLLBACK): nothing is committed, and the first error is thrown.
 *
 * The contract for fn, which the client handed to it enforces where it can:
 * - it sends exactly one query, before it awaits anything: a query sent later
 *   would run after the COMMIT, outside the transaction and its role. A late
 *   or second query is refused; with none sent in time, ROLLBACK is sent
 *   instead of COMMIT and the call rejects;
 * - nothing it does after the statement's answer may fail (map the rows,
 *   nothing more): the COMMIT is already on its way behind the statement, so
 *   a throw there would report a failure for a committed statement.
 */
export async function withOneStatementTransaction<T>(pool: Pool, fn: (db: Queryable) => Promise<T>, begin = 'BEGIN'): Promise<T> {
  const client = await pool.connect();
  let open = true;
  let sent = 0;
  const once: Queryable = {
    query: ((...args: unknown[]) => {
      if (!open || ++sent > 1) throw new Error('withOneStatementTransaction: one statement, sent before fn awaits anything');
      return (client.query as (...a: unknown[]) => unknown)(...args);
    }) as PoolClient['query'],
  };
  const pipelined = client as unknown as { pipeline: boolean; connection: { stream: { cork(): void; uncork(): void } } };
  pipelined.pipeline = true;
  // pg writes each query as it is sent, a system call apiece; corked, the three leave in one write (as pg corks
  // the messages of one extended query), and PostgreSQL wakes once to read them.
  const socket = pipelined.connection.stream;
  socket.cork();
  let begun: Promise<unknown>;
  let done: Promise<T>;
  let onlyOne: boolean;
  let ended: Promise<{ command: string }>;
  try {
    begun = client.query(begin);
    // async: a throw in fn before its first await becomes a rejection, after BEGIN is already on its way.
    done = (async () => fn(once))();
    open = false;
    onlyOne = sent === 1;
    ended = client.query(onlyOne ? 'COMMIT' : 'ROLLBACK');
  } finally {
    socket.uncork();
  }
  const [b, d, e] = await Promise.allSettled([begun, done, ended]);
  pipelined.pipeline = false;
  let failure: unknown;
  if (b.status === 'rejected') failure = b.reason;
  else if (d.status === 'rejected') failure = d.reason;
  else if (e.status === 'rejected') failure = e.reason;
  else if (!onlyOne) failure = new Error('withOneStatementTransaction: fn sent no statement before it awaited');
  else if (e.value.command !== 'COMMIT') failure = new Error(`withOneStatementTransaction: the transaction ended with ${e.value.command}`);
  if (failure === undefined) {
    client.release();
    return (d as PromiseFulfilledResult<T>).value;
  }
  await abandon(client, failure);
  throw failure;
}
