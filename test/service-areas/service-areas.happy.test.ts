import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember } from '../helpers/fixtures.ts';
import { asUser, type TokenClient } from '../helpers/token-client.ts';

const AREA_KEYS = [
  'area_type',
  'country',
  'created_at',
  'id',
  'label',
  'location_id',
  'organization_id',
  'radius_km',
  'updated_at',
  'value',
];

describe('service areas: success paths', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  async function newUser(): Promise<{ api: TokenClient; orgId: string }> {
    const member = await createMember(t.db.pool);
    return { api: asUser(t.app, member.token), orgId: member.org.id };
  }

  test('POST /service-areas returns 201 with the whole record', async () => {
    const { api, orgId } = await newUser();
    const location = (await api.post('/locations', { name: 'Hub' })).json();
    const res = await api.post('/service-areas', {
      label: 'Greater Berlin',
      area_type: 'region',
      value: 'BE',
      country: 'DE',
      radius_km: 42.5,
      location_id: location.id,
    });
    assert.equal(res.statusCode, 201);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), AREA_KEYS);
    assert.equal(res.headers.location, `/service-areas/${body.id}`);
    assert.deepEqual(
      { ...body, id: undefined, created_at: undefined, updated_at: undefined },
      {
        id: undefined,
        organization_id: orgId,
        label: 'Greater Berlin',
        area_type: 'region',
        value: 'BE',
        country: 'DE',
        radius_km: 42.5,
        location_id: location.id,
        created_at: undefined,
        updated_at: undefined,
      },
    );
    assert.equal(body.created_at, new Date(body.created_at).toISOString());
    assert.equal(body.updated_at, body.created_at);
  });

  test('only label is required; the rest default to null and label is trimmed', async () => {
    const { api } = await newUser();
    const res = await api.post('/service-areas', { label: ' 10115 ' });
    assert.equal(res.statusCode, 201);
    const body = res.json();
    assert.equal(body.label, '10115');
    assert.deepEqual([body.area_type, body.value, body.country, body.radius_km, body.location_id], [null, null, null, null, null]);
  });

  test('radius_km accepts the range limits (just above 0, exactly 20000) and null', async () => {
    const { api } = await newUser();
    for (const radius_km of [0.001, 20000, 1, null]) {
      const res = await api.post('/service-areas', { label: `r ${radius_km}`, radius_km });
      assert.equal(res.statusCode, 201, String(radius_km));
      assert.equal(res.json().radius_km, radius_km);
    }
  });

  test("GET /service-areas lists the organization's areas by label", async () => {
    const { api } = await newUser();
    assert.deepEqual((await api.get('/service-areas')).json(), []);
    for (const label of ['Munich', 'berlin', 'Aachen']) await api.post('/service-areas', { label });
    const res = await api.get('/service-areas');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(
      res.json().map((a: { label: string }) => a.label),
      ['Aachen', 'berlin', 'Munich'],
    );
  });

  test('GET /service-areas/{id} returns the record', async () => {
    const { api } = await newUser();
    const created = (await api.post('/service-areas', { label: 'Hamburg', radius_km: 15 })).json();
    const res = await api.get(`/service-areas/${created.id}`);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), created);
  });

  test('PATCH links, relabels and clears; updated_at moves on each change', async () => {
    const { api } = await newUser();
    const location = (await api.post('/locations', { name: 'Depot' })).json();
    const created = (await api.post('/service-areas', { label: 'Cologne', radius_km: 10, area_type: 'city' })).json();

    const linked = await api.patch(`/service-areas/${created.id}`, { location_id: location.id, label: ' Köln ' });
    assert.equal(linked.statusCode, 200);
    assert.deepEqual(linked.json(), { ...created, location_id: location.id, label: 'Köln', updated_at: linked.json().updated_at });
    assert.ok(linked.json().updated_at > created.updated_at);

    const cleared = await api.patch(`/service-areas/${created.id}`, { radius_km: null, area_type: null, location_id: null });
    assert.equal(cleared.statusCode, 200);
    assert.deepEqual([cleared.json().radius_km, cleared.json().area_type, cleared.json().location_id], [null, null, null]);
    assert.equal(cleared.json().label, 'Köln', 'fields not sent keep their value');
    assert.ok(cleared.json().updated_at > linked.json().updated_at);
    assert.deepEqual((await api.get(`/service-areas/${created.id}`)).json(), cleared.json());
  });

  test('DELETE /service-areas/{id} answers 204 and the area is gone', async () => {
    const { api } = await newUser();
    const created = (await api.post('/service-areas', { label: 'Bonn' })).json();
    const res = await api.delete(`/service-areas/${created.id}`);
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    const gone = await api.get(`/service-areas/${created.id}`);
    assert.equal(gone.statusCode, 404);
    assert.equal(gone.json().code, 'SERVICE_AREA_NOT_FOUND');
  });

  test('deleting a linked location unlinks its service areas, which stay and show a new updated_at', async () => {
    const { api } = await newUser();
    const location = (await api.post('/locations', { name: 'Closing soon' })).json();
    const keep = (await api.post('/locations', { name: 'Staying' })).json();
    const linked = (await api.post('/service-areas', { label: 'Linked', location_id: location.id })).json();
    const elsewhere = (await api.post('/service-areas', { label: 'Elsewhere', location_id: keep.id })).json();

    assert.equal((await api.delete(`/locations/${location.id}`)).statusCode, 204);

    const after = (await api.get(`/service-areas/${linked.id}`)).json();
    assert.equal(after.location_id, null);
    assert.equal(after.label, 'Linked');
    assert.ok(after.updated_at > linked.updated_at, 'clearing the link is a change');
    assert.deepEqual((await api.get(`/service-areas/${elsewhere.id}`)).json(), elsewhere, 'other links untouched');
  });
});
