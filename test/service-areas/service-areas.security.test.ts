// Tenant isolation of service areas: another organization's area is 404, a
// link to another organization's location is a 400 naming location_id, and
// row-level security holds even for SQL that skips withOrg.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { withOrg } from '../../src/db/with-org.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { reachWithoutOrganization } from '../helpers/db.ts';
import { createMember, type Member } from '../helpers/fixtures.ts';
import { asUser, type TokenClient } from '../helpers/token-client.ts';

describe('service areas: organization isolation', () => {
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

  async function snapshot() {
    return (await t.db.pool.query('SELECT * FROM service_areas ORDER BY id')).rows;
  }

  test("another organization's service area is 404 to GET, PATCH and DELETE, and stays untouched", async () => {
    const secret = (await them.post('/service-areas', { label: 'Their secret territory', radius_km: 12 })).json();
    const before = await snapshot();
    const attempts = [
      await me.get(`/service-areas/${secret.id}`),
      await me.patch(`/service-areas/${secret.id}`, { label: 'Mine now' }),
      await me.delete(`/service-areas/${secret.id}`),
    ];
    for (const res of attempts) {
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().code, 'SERVICE_AREA_NOT_FOUND');
      assert.ok(!res.body.includes('Their secret territory'));
    }
    assert.deepEqual(await snapshot(), before);
    assert.deepEqual((await me.get('/service-areas')).json(), []);
  });

  test("linking to another organization's location is a 400 naming location_id, on create and on update", async () => {
    const theirLocation = (await them.post('/locations', { name: 'Their depot' })).json();
    const before = await snapshot();
    const created = await me.post('/service-areas', { label: 'Sneaky', location_id: theirLocation.id });
    assert.equal(created.statusCode, 400);
    assert.deepEqual(created.json().errors, [{ field: 'location_id', message: 'is not a location of this organization' }]);
    assert.ok(!created.body.includes('Their depot'));
    assert.deepEqual(await snapshot(), before, 'nothing created');

    const own = (await me.post('/service-areas', { label: 'Own' })).json();
    const afterCreate = await snapshot();
    const patched = await me.patch(`/service-areas/${own.id}`, { location_id: theirLocation.id, label: 'Changed' });
    assert.equal(patched.statusCode, 400);
    assert.equal(patched.json().errors[0].field, 'location_id');
    assert.deepEqual(await snapshot(), afterCreate, 'nothing changed');
    assert.equal((await them.get(`/locations/${theirLocation.id}`)).json().name, 'Their depot');
  });

  test('the composite foreign key refuses a cross-organization link even in raw SQL', async () => {
    const theirLocation = (await them.post('/locations', { name: 'Elsewhere' })).json();
    await assert.rejects(
      t.db.pool.query("INSERT INTO service_areas (organization_id, label, location_id) VALUES ($1, 'x', $2)", [
        mine.org.id,
        theirLocation.id,
      ]),
      (error: { code?: string; constraint?: string }) => error.code === '23503' && error.constraint === 'service_areas_location_fkey',
    );
  });

  test('RLS: as switchboard_app without an organization, queries see no rows', async () => {
    await me.post('/service-areas', { label: 'Visible to owner only' });
    const total = (await t.db.pool.query('SELECT count(*)::int AS n FROM service_areas')).rows[0].n;
    assert.ok(total > 0);
    assert.deepEqual(await reachWithoutOrganization(t.db.pool, 'service_areas', 'label'), [0, 0, 0]);
  });

  test('RLS: inside withOrg, a service area for another organization cannot be inserted', async () => {
    await assert.rejects(
      withOrg(t.db.pool, mine.org.id, (db) =>
        db.query("INSERT INTO service_areas (organization_id, label) VALUES ($1, 'planted')", [theirs.org.id]),
      ),
      (error: { code?: string }) => error.code === '42501',
    );
    const visible = await withOrg(t.db.pool, mine.org.id, (db) => db.query('SELECT organization_id FROM service_areas'));
    assert.ok(visible.rows.every((row) => row.organization_id === mine.org.id));
  });
});
