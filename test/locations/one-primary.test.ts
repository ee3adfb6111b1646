// The one-primary rule under concurrency: many requests racing to mark a
// primary all succeed (no 500, no 409), and the organization ends with
// exactly one primary, the one marked last.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember } from '../helpers/fixtures.ts';
import { asUser } from '../helpers/token-client.ts';

describe('one primary location per organization', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  async function primaries(orgId: string): Promise<{ id: string; updated_at: Date }[]> {
    const { rows } = await t.db.pool.query('SELECT id, updated_at FROM locations WHERE organization_id = $1 AND is_primary', [orgId]);
    return rows;
  }

  test('10 concurrent "make primary" requests all succeed and leave exactly one primary', async () => {
    const member = await createMember(t.db.pool);
    const api = asUser(t.app, member.token);
    await api.post('/locations', { name: 'Initial primary', is_primary: true });
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await api.post('/locations', { name: `Branch ${i}` })).json().id);

    for (let round = 0; round < 3; round++) {
      const responses = await Promise.all(ids.map((id) => api.post(`/locations/${id}/primary`)));
      assert.deepEqual(
        responses.map((r) => r.statusCode),
        Array(10).fill(200),
        responses.map((r) => r.body).join('\n'),
      );
      assert.ok(responses.every((r) => r.json().is_primary === true));

      const left = await primaries(member.org.id);
      assert.equal(left.length, 1, 'exactly one primary');
      // The winner is the request that committed last: its update is the newest.
      const newest = responses.map((r) => r.json()).sort((a, b) => (a.updated_at < b.updated_at ? 1 : -1))[0];
      assert.equal(left[0]!.id, newest.id);
    }
  });

  test('10 concurrent creates with is_primary: true all succeed and leave exactly one primary', async () => {
    const member = await createMember(t.db.pool);
    const api = asUser(t.app, member.token);
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => api.post('/locations', { name: `Racer ${i}`, is_primary: true })),
    );
    assert.deepEqual(
      responses.map((r) => r.statusCode),
      Array(10).fill(201),
      responses.map((r) => r.body).join('\n'),
    );
    assert.equal((await primaries(member.org.id)).length, 1);
    const listed = (await api.get('/locations')).json() as { is_primary: boolean }[];
    assert.equal(listed.length, 10);
    assert.deepEqual(
      listed.map((l) => l.is_primary),
      [true, ...Array(9).fill(false)],
    );
  });

  test('mixed concurrent PATCH is_primary and primary requests also end with one primary', async () => {
    const member = await createMember(t.db.pool);
    const api = asUser(t.app, member.token);
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await api.post('/locations', { name: `Mixed ${i}` })).json().id);
    const responses = await Promise.all(
      ids.map((id, i) =>
        i % 2 ? api.patch(`/locations/${id}`, { is_primary: true, city: `City ${i}` }) : api.post(`/locations/${id}/primary`),
      ),
    );
    assert.deepEqual(
      responses.map((r) => r.statusCode),
      Array(10).fill(200),
    );
    assert.equal((await primaries(member.org.id)).length, 1);
  });

  test('the database itself refuses a second primary (partial unique index)', async () => {
    const member = await createMember(t.db.pool);
    const api = asUser(t.app, member.token);
    await api.post('/locations', { name: 'P', is_primary: true });
    const other = (await api.post('/locations', { name: 'Q' })).json();
    await assert.rejects(
      t.db.pool.query('UPDATE locations SET is_primary = true WHERE id = $1', [other.id]),
      (error: { code?: string; constraint?: string }) => error.code === '23505' && error.constraint === 'locations_one_primary_per_org',
    );
  });

  test('organizations have independent primaries', async () => {
    const a = await createMember(t.db.pool);
    const b = await createMember(t.db.pool);
    await asUser(t.app, a.token).post('/locations', { name: 'A HQ', is_primary: true });
    await asUser(t.app, b.token).post('/locations', { name: 'B HQ', is_primary: true });
    assert.equal((await primaries(a.org.id)).length, 1);
    assert.equal((await primaries(b.org.id)).length, 1);
  });
});
