import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { listMigrations, migrate } from '../../src/db/migrate.ts';
import { createPool } from '../../src/db/pool.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

describe('migrations', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase({ migrated: false });
  });
  after(() => db.drop());

  test('two processes migrating one database at once both succeed, and each file applies once', async () => {
    const first = createPool(db.url, 2);
    const second = createPool(db.url, 2);
    try {
      const [a, b] = await Promise.all([migrate(first), migrate(second)]);
      const all = await listMigrations();
      assert.deepEqual([...a.applied, ...b.applied].sort(), all);
      const { rows } = await db.pool.query('SELECT name FROM schema_migrations ORDER BY name');
      assert.deepEqual(
        rows.map((r) => r.name),
        all,
      );
    } finally {
      await first.end();
      await second.end();
    }
  });

  test('running again applies nothing', async () => {
    assert.deepEqual(await migrate(db.pool), { applied: [] });
  });
});
