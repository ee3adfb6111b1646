// A named statement numbers its parameters in the order it declares them, and
// PostgreSQL receives each value under the name the SQL gives it, whatever
// order the caller's object lists them in.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { executeText, inlined, namedStatement, prepareText, valuesOf } from '../../src/db/named-statement.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

describe('named statements', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase({ migrated: false });
  });
  after(() => db.drop());

  const PAIR = namedStatement(
    'test_named_pair',
    { first: 'int', second: 'text' },
    `SELECT @second::text AS second, @first::int AS first, @first::int + 1 AS next`,
  );

  test('each name becomes its declared position, and every use of a name the same one', () => {
    assert.equal(PAIR.text, 'SELECT $2::text AS second, $1::int AS first, $1::int + 1 AS next');
    assert.deepEqual(valuesOf(PAIR, { second: 'b', first: 7 }), [7, 'b']);
  });

  test('a parameter the SQL does not declare, or one it declares and never uses, is refused when defined', () => {
    assert.throws(() => namedStatement('test_undeclared', { a: 'int' }, 'SELECT @a, @b'), /@b is not one of its parameters/);
    assert.throws(() => namedStatement('test_unused', { a: 'int', b: 'int' }, 'SELECT @a'), /never used: b/);
  });

  test('the values reach PostgreSQL under their names: as a parameterised query, prepared and executed, and written in', async () => {
    const { rows } = await db.pool.query(PAIR.text, valuesOf(PAIR, { second: 'b', first: 7 }));
    assert.deepEqual(rows, [{ second: 'b', first: 7, next: 8 }]);
    const client = await db.pool.connect();
    try {
      await client.query(prepareText(PAIR));
      const executed = await client.query(executeText(PAIR, { second: "'b'", first: '7' }));
      assert.deepEqual(executed.rows, [{ second: 'b', first: 7, next: 8 }]);
    } finally {
      client.release();
    }
    const written = await db.pool.query(inlined(PAIR, { second: "'b'", first: '7' }));
    assert.deepEqual(written.rows, [{ second: 'b', first: 7, next: 8 }]);
  });
});
