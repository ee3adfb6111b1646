import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { createPool, type Pool } from '../../src/db/pool.ts';
import { withOneStatementTransaction, withTransaction } from '../../src/db/transaction.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

// BEGIN, one statement and COMMIT written together (pg's pipelining for that
// transaction only): the same outcomes as withTransaction, one round trip.
describe('one statement in its own transaction, in one round trip', () => {
  let database: TestDatabase;
  /** One connection, so every test reuses the connection the previous one released. */
  let pool: Pool;

  before(async () => {
    database = await createTestDatabase({ migrated: false });
    await database.pool.query('CREATE TABLE items (id int PRIMARY KEY, note text)');
    pool = createPool(database.url, 1);
  });
  after(async () => {
    await pool.end();
    await database.drop();
  });

  const stored = async () => (await database.pool.query<{ id: number; note: string }>('SELECT id, note FROM items ORDER BY id')).rows;

  /** The connection is back in the pool outside any transaction, with pipelining off. */
  async function assertCleanConnection() {
    const client = await pool.connect();
    try {
      assert.equal((client as unknown as { pipeline: boolean }).pipeline, false);
      const { rows } = await client.query<{ open: boolean; note: string }>(
        "SELECT pg_current_xact_id_if_assigned() IS NOT NULL AS open, current_setting('app.note', true) AS note",
      );
      assert.deepEqual(rows, [{ open: false, note: '' }]);
    } finally {
      client.release();
    }
  }

  test("commits the statement and returns what fn returns; BEGIN's settings apply to it and end with it", async () => {
    const result = await withOneStatementTransaction(
      pool,
      async (db) => {
        const { rows } = await db.query<{ id: number }>("INSERT INTO items VALUES ($1, current_setting('app.note')) RETURNING id", [1]);
        return rows[0]!.id;
      },
      "BEGIN; SET LOCAL app.note = 'from begin'",
    );
    assert.equal(result, 1);
    assert.deepEqual(await stored(), [{ id: 1, note: 'from begin' }]);
    await assertCleanConnection();
  });

  test('a statement PostgreSQL refuses rejects with its error; nothing is committed', async () => {
    await assert.rejects(
      withOneStatementTransaction(pool, (db) => db.query('INSERT INTO items VALUES ($1, $2), ($1, $2)', [2, 'twice'])),
      (error) => error instanceof pg.DatabaseError && error.code === '23505',
    );
    assert.deepEqual(await stored(), [{ id: 1, note: 'from begin' }]);
    await assertCleanConnection();
  });

  test('a BEGIN that fails aborts the transaction: the statement does not run outside it', async () => {
    await assert.rejects(
      withOneStatementTransaction(
        pool,
        (db) => db.query('INSERT INTO items VALUES ($1, $2)', [3, 'no role']),
        'BEGIN; SET LOCAL ROLE no_such_role',
      ),
      (error) => error instanceof pg.DatabaseError && /no_such_role/.test(error.message),
    );
    assert.deepEqual(await stored(), [{ id: 1, note: 'from begin' }]);
    await assertCleanConnection();
  });

  test('fn must send its one statement before it awaits: a late one is refused and nothing is committed; so is a second one', async () => {
    await assert.rejects(
      withOneStatementTransaction(pool, async (db) => {
        await db.query('INSERT INTO items VALUES ($1, $2)', [4, 'first']);
        return db.query('INSERT INTO items VALUES ($1, $2)', [5, 'second']);
      }),
      /one statement/,
    );
    // The first was committed all the same: the COMMIT was on its way behind it (the contract: nothing after the statement may fail).
    assert.deepEqual(
      (await stored()).map((r) => r.id),
      [1, 4],
    );
    await assert.rejects(
      withOneStatementTransaction(pool, async (db) => {
        await new Promise((resolve) => setImmediate(resolve));
        return db.query('INSERT INTO items VALUES ($1, $2)', [6, 'late']);
      }),
      /one statement/,
    );
    assert.deepEqual(
      (await stored()).map((r) => r.id),
      [1, 4],
    );
    await assertCleanConnection();
  });

  test('the connection goes on serving ordinary transactions', async () => {
    await withTransaction(pool, (client) => client.query('INSERT INTO items VALUES ($1, $2)', [7, 'ordinary']));
    assert.deepEqual(
      (await stored()).map((r) => r.id),
      [1, 4, 7],
    );
  });
});
