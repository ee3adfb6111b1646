import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { withOrg } from '../../src/db/with-org.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember } from '../helpers/fixtures.ts';

// Request work runs on a pool connected as switchboard_request (not as the
// owner, where SET LOCAL ROLE inside withOrg would be the only barrier), and
// the tenant tables force row-level security (every one of them, read from
// the catalog, in row-level-security.test.ts).
const CUSTOMER_TABLES = [
  'locations',
  'service_areas',
  'agents',
  'calls',
  'webhook_subscriptions',
  'webhook_deliveries',
  'webhook_attempts',
  'idempotency_keys',
  'audit_events',
];

describe('request work runs as a role that row-level security binds', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('the request pool logs in as switchboard_request: not superuser, not BYPASSRLS, owner of nothing', async () => {
    const { rows } = await t.app.db.query(
      `SELECT current_user AS name, session_user AS login, r.rolsuper, r.rolbypassrls, r.rolcanlogin,
              (SELECT count(*)::int FROM pg_class c WHERE c.relowner = r.oid) AS owned
         FROM pg_roles r WHERE r.rolname = current_user`,
    );
    assert.deepEqual(rows, [
      { name: 'switchboard_request', login: 'switchboard_request', rolsuper: false, rolbypassrls: false, rolcanlogin: true, owned: 0 },
    ]);
  });

  test('a query that forgets withOrg sees no customer rows, reads or writes; through withOrg it sees its own', async () => {
    const member = await createMember(t.db.pool);
    const created = await t.app.inject({
      method: 'POST',
      url: '/calls',
      headers: { 'x-user-token': member.token, 'idempotency-key': 'private-key' },
      payload: { summary: 'private', duration_seconds: 3 },
    });
    assert.equal(created.statusCode, 201);
    await t.app.inject({ method: 'POST', url: '/locations', headers: { 'x-user-token': member.token }, payload: { name: 'HQ' } });
    const owner = await t.db.pool.query(
      'SELECT (SELECT count(*) FROM calls)::int AS calls, (SELECT count(*) FROM locations)::int AS locations, (SELECT count(*) FROM idempotency_keys)::int AS keys',
    );
    assert.ok(owner.rows[0].calls >= 1 && owner.rows[0].locations >= 1 && owner.rows[0].keys >= 1, 'the rows exist');

    for (const table of CUSTOMER_TABLES) {
      const { rows } = await t.app.db.query(`SELECT count(*)::int AS n FROM ${table}`);
      assert.equal(rows[0].n, 0, `${table} without withOrg`);
    }
    const update = await t.app.db.query("UPDATE calls SET summary = 'tampered' WHERE status = 'completed'");
    assert.equal(update.rowCount, 0);
    const remove = await t.app.db.query('DELETE FROM locations');
    assert.equal(remove.rowCount, 0);
    await assert.rejects(
      t.app.db.query("INSERT INTO locations (organization_id, name) VALUES ($1, 'planted')", [member.org.id]),
      /row-level security/,
    );

    const mine = await withOrg(t.app.db, member.org.id, async (db) => (await db.query('SELECT id FROM calls')).rows);
    assert.deepEqual(
      mine.map((r) => r.id),
      [created.json().id],
    );
  });
});
