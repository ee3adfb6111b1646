// Statistics gathered when a table grows (src/db/table-statistics.ts): the
// running housekeeping analyzes a table that has doubled within seconds, not
// at autovacuum's next round, and leaves the others alone.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { maintenanceTasks, taskHost } from '../../src/background.ts';
import { startAll, stopAll } from '../../src/tasks/task.ts';
import { STATISTICS_CHECK_MS } from '../../src/db/table-statistics.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember } from '../helpers/fixtures.ts';

describe('table statistics', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
    // Only the housekeeping's ANALYZE may run here.
    for (const table of ['calls', 'agents']) await t.db.pool.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
  });
  after(() => t.close());

  const recorded = async (table: string) =>
    (await t.db.pool.query<{ relpages: number }>('SELECT relpages FROM pg_class WHERE oid = $1::regclass', [table])).rows[0]!.relpages;

  test('a table that has doubled is analyzed within seconds by the running housekeeping; a small one is not', async () => {
    const member = await createMember(t.db.pool);
    await t.db.pool.query(
      `INSERT INTO calls (organization_id, status, completed_at, summary, duration_seconds)
       SELECT $1, 'completed', now(), repeat('x', 200), 1 FROM generate_series(1, 5000)`,
      [member.org.id],
    );
    await t.db.pool.query("INSERT INTO agents (organization_id, name) VALUES ($1, 'one agent')", [member.org.id]);
    assert.equal(await recorded('calls'), 0, 'never analyzed yet');

    const log = pino({ level: 'silent' });
    const tasks = maintenanceTasks(taskHost(log), { pool: t.db.pool, config: t.config, log });
    await startAll(tasks);
    try {
      const deadline = Date.now() + 6 * STATISTICS_CHECK_MS;
      while ((await recorded('calls')) === 0) {
        assert.ok(Date.now() < deadline, 'calls analyzed by the housekeeping');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const pages = (await t.db.pool.query<{ n: number }>("SELECT pg_relation_size('calls')::int / 8192 AS n")).rows[0]!.n;
      assert.ok((await recorded('calls')) >= pages / 2, 'its statistics record its size now');
      assert.equal(await recorded('agents'), 0, 'a table of one page is left alone');
    } finally {
      await stopAll(tasks);
    }
  });
});
