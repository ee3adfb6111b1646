import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { withOrg } from '../../src/db/with-org.ts';
import { createMember, createOrg } from '../helpers/fixtures.ts';
import { createTestDatabase, reachWithoutOrganization, type TestDatabase } from '../helpers/db.ts';

describe('row-level security on tenant tables', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(() => db.drop());

  test('withOrg sees only the rows of its organization', async () => {
    const a = await createMember(db.pool);
    const b = await createMember(db.pool);
    const seen = await withOrg(db.pool, a.org.id, async (client) => (await client.query('SELECT organization_id FROM memberships')).rows);
    assert.equal(seen.length, 1);
    assert.equal(seen[0].organization_id, a.org.id);
    const seenB = await withOrg(db.pool, b.org.id, async (client) => (await client.query('SELECT user_id FROM memberships')).rows);
    assert.deepEqual(seenB.map((r) => r.user_id), [b.user.id]);
  });

  test('without the organization setting a tenant query returns zero rows', async () => {
    await createMember(db.pool);
    assert.deepEqual(await reachWithoutOrganization(db.pool, 'memberships', 'role'), [0, 0, 0]);
  });

  test('the setting does not outlive its transaction on a pooled connection', async () => {
    const a = await createMember(db.pool);
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL ROLE switchboard_app');
      await client.query(`SELECT set_config('app.organization_id', $1, true)`, [a.org.id]);
      assert.equal((await client.query('SELECT * FROM memberships')).rows.length, 1);
      await client.query('COMMIT');
      await client.query('BEGIN');
      await client.query('SET LOCAL ROLE switchboard_app');
      assert.equal((await client.query('SELECT * FROM memberships')).rows.length, 0);
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  });

  test('inserting a row for another organization fails', async () => {
    const a = await createMember(db.pool);
    const other = await createOrg(db.pool);
    await assert.rejects(
      withOrg(db.pool, a.org.id, (client) =>
        client.query(`INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, 'member')`, [other.id, a.user.id]),
      ),
      /row-level security/,
    );
    const { rows } = await db.pool.query('SELECT 1 FROM memberships WHERE organization_id = $1', [other.id]);
    assert.equal(rows.length, 0);
  });

  test('the application role cannot switch off row-level security', async () => {
    const a = await createMember(db.pool);
    await assert.rejects(
      withOrg(db.pool, a.org.id, (client) => client.query('SET LOCAL row_security = off').then(() => client.query('SELECT * FROM memberships'))),
      /row-level security/,
    );
  });

  test('withOrg refuses anything but an organization UUID (it is inlined into the opening statement)', async () => {
    await assert.rejects(withOrg(db.pool, "x'); DROP TABLE memberships; --", async () => 1), /not an organization id/);
    const { rows } = await db.pool.query(`SELECT to_regclass('memberships') IS NOT NULL AS present`);
    assert.equal(rows[0].present, true);
  });
});
