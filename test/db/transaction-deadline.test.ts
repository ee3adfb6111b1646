import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createPool, type DeadlineQueryConfig, type Pool } from '../../src/db/pool.ts';
import { withTransaction } from '../../src/db/transaction.ts';
import { isDatabaseUnavailable } from '../../src/db/availability.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startSilentProxy, type SilentProxy } from '../helpers/silent-proxy.ts';

describe('a transaction whose statement passes its deadline on a silent connection', () => {
  let db: TestDatabase;
  let proxy: SilentProxy;
  let pool: Pool;

  before(async () => {
    db = await createTestDatabase({ migrated: false });
    proxy = await startSilentProxy(db.url);
    pool = createPool(proxy.urlFor(db.url), 2);
  });
  after(async () => {
    await pool.end().catch(() => {});
    await proxy.close();
    await db.drop();
  });

  test('fails with a database-unavailable error, without waiting on a ROLLBACK, and its connection is dropped', async () => {
    const outcome = withTransaction(pool, async (client) => {
      proxy.silence(); // the route dies inside the transaction
      const statement: DeadlineQueryConfig = { text: 'SELECT $1::int AS one', values: [1], query_timeout: 300 };
      return client.query(statement);
    });
    const stuck = new Promise<'stuck'>((resolve) => setTimeout(() => resolve('stuck'), 5000).unref());
    const error = await Promise.race([
      outcome.then(
        () => undefined,
        (e: unknown) => e,
      ),
      stuck,
    ]);
    assert.notEqual(error, 'stuck', 'the transaction ended, and did not wait on a ROLLBACK behind the unanswered statement');
    assert.ok(error instanceof Error && /Query read timeout/.test(error.message), String(error));
    assert.ok(isDatabaseUnavailable(error));
    assert.equal(pool.totalCount, 0, 'the silent connection is not handed to anyone again');
    // The pool goes on through a new connection.
    assert.equal((await pool.query('SELECT 1 AS one')).rows[0].one, 1);
  });
});
