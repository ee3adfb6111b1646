// Tenant isolation of locations: another organization's id is answered 404
// on every route and its data stays untouched; row-level security holds even
// for SQL that skips withOrg.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { withOrg } from '../../src/db/with-org.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { reachWithoutOrganization } from '../helpers/db.ts';
import { createMember, PASSWORD, type Member } from '../helpers/fixtures.ts';
import { createUser } from '../../src/organizations/organizations.service.ts';
import { asUser, type TokenClient } from '../helpers/token-client.ts';

describe('locations: organization isolation', () => {
  let t: TestApp;
  let mine: Member;
  let theirs: Member;
  let me: TokenClient;
  let them: TokenClient;
  before(async () => {
    t = await startTestApp();
    mine = await createMember(t.db.pool);
    theirs = await createMember(t.db.pool);
    me = asUser(t.app, mine.token);
    them = asUser(t.app, theirs.token);
  });
  after(() => t.close());

  async function snapshot(orgId: string) {
    const { rows } = await t.db.pool.query('SELECT * FROM locations WHERE organization_id = $1 ORDER BY id', [orgId]);
    return rows;
  }

  test("another organization's location is 404 to GET, PATCH, DELETE and primary, and stays untouched", async () => {
    const secret = (await them.post('/locations', { name: 'Their secret depot', city: 'Hidden', is_primary: true })).json();
    await them.post('/locations', { name: 'Their other site' });
    const myPrimary = (await me.post('/locations', { name: 'My HQ', is_primary: true })).json();
    const theirsBefore = await snapshot(theirs.org.id);
    const mineBefore = await snapshot(mine.org.id);

    const attempts = [
      await me.get(`/locations/${secret.id}`),
      await me.patch(`/locations/${secret.id}`, { name: 'Mine now', is_primary: true }),
      await me.delete(`/locations/${secret.id}`),
      await me.post(`/locations/${secret.id}/primary`),
    ];
    for (const res of attempts) {
      assert.equal(res.statusCode, 404, res.body);
      assert.equal(res.json().code, 'LOCATION_NOT_FOUND');
      assert.ok(!res.body.includes('Their secret depot') && !res.body.includes('Hidden'), 'no data of theirs');
    }
    const unknown = await me.get('/locations/00000000-0000-4000-8000-000000000000');
    const withoutDetail = (problem: Record<string, unknown>) => ({ ...problem, detail: undefined });
    assert.deepEqual(withoutDetail(attempts[0]!.json()), withoutDetail(unknown.json()), 'indistinguishable from an id that does not exist');

    assert.deepEqual(await snapshot(theirs.org.id), theirsBefore, 'their rows unchanged');
    assert.deepEqual(await snapshot(mine.org.id), mineBefore, 'my primary was not cleared by the failed attempts');
    assert.equal((await me.get(`/locations/${myPrimary.id}`)).json().is_primary, true);
  });

  test("listing shows only the session organization's locations", async () => {
    const listed = (await me.get('/locations')).json() as { organization_id: string }[];
    assert.ok(listed.length > 0);
    assert.ok(listed.every((l) => l.organization_id === mine.org.id));
  });

  test('organization_id in a body is refused, not used', async () => {
    const res = await me.post('/locations', { name: 'Smuggled', organization_id: theirs.org.id });
    assert.equal(res.statusCode, 400);
    assert.equal(
      (await snapshot(theirs.org.id)).some((row) => row.name === 'Smuggled'),
      false,
    );
  });

  test('a user in two organizations sees the locations of the organization the session selected', async () => {
    await createUser(t.db.pool, { email: mine.email, password: PASSWORD, organizationId: theirs.org.id, role: 'member' });
    const login = await t.app.inject({
      method: 'POST',
      url: '/auth/sessions',
      payload: { email: mine.email, password: PASSWORD, organization_id: theirs.org.id },
    });
    const other = asUser(t.app, login.json().token);
    const listed = (await other.get('/locations')).json() as { organization_id: string }[];
    assert.ok(listed.length > 0 && listed.every((l) => l.organization_id === theirs.org.id));
  });

  test('RLS: as switchboard_app without an organization, queries see no rows', async () => {
    const total = (await t.db.pool.query('SELECT count(*)::int AS n FROM locations')).rows[0].n;
    assert.ok(total > 0, 'rows exist (seen by the owner role)');
    assert.deepEqual(await reachWithoutOrganization(t.db.pool, 'locations', 'name'), [0, 0, 0]);
  });

  test('RLS: inside withOrg, a row for another organization cannot be inserted or moved there', async () => {
    await assert.rejects(
      withOrg(t.db.pool, mine.org.id, (db) =>
        db.query("INSERT INTO locations (organization_id, name) VALUES ($1, 'planted')", [theirs.org.id]),
      ),
      (error: { code?: string }) => error.code === '42501',
    );
    const own = (await me.post('/locations', { name: 'Movable' })).json();
    await assert.rejects(
      withOrg(t.db.pool, mine.org.id, (db) => db.query('UPDATE locations SET organization_id = $2 WHERE id = $1', [own.id, theirs.org.id])),
      (error: { code?: string }) => error.code === '42501',
    );
    const seenFromMine = await withOrg(t.db.pool, mine.org.id, (db) => db.query('SELECT organization_id FROM locations'));
    assert.ok(seenFromMine.rows.every((row) => row.organization_id === mine.org.id));
  });
});
