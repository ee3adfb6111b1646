import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember } from '../helpers/fixtures.ts';
import { asUser, type TokenClient } from '../helpers/token-client.ts';

const LOCATION_KEYS = [
  'address_line1',
  'address_line2',
  'city',
  'country',
  'created_at',
  'id',
  'is_primary',
  'latitude',
  'longitude',
  'name',
  'organization_id',
  'postal_code',
  'state',
  'updated_at',
];

const FULL = {
  name: 'Berlin office',
  address_line1: 'Unter den Linden 1',
  address_line2: '3rd floor',
  city: 'Berlin',
  state: 'Berlin',
  postal_code: '10117',
  country: 'DE',
  latitude: 52.516275,
  longitude: 13.377704,
};

describe('locations: success paths', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  async function newUser(): Promise<{ api: TokenClient; orgId: string }> {
    const member = await createMember(t.db.pool);
    return { api: asUser(t.app, member.token), orgId: member.org.id };
  }

  test('POST /locations returns 201 with the whole record', async () => {
    const { api, orgId } = await newUser();
    const res = await api.post('/locations', FULL);
    assert.equal(res.statusCode, 201);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), LOCATION_KEYS);
    assert.match(body.id, /^[0-9a-f-]{36}$/);
    assert.equal(res.headers.location, `/locations/${body.id}`);
    assert.equal(body.organization_id, orgId);
    assert.deepEqual(
      { ...body, id: undefined, organization_id: undefined, is_primary: undefined, created_at: undefined, updated_at: undefined },
      {
        ...FULL,
        id: undefined,
        organization_id: undefined,
        is_primary: undefined,
        created_at: undefined,
        updated_at: undefined,
      },
    );
    assert.equal(body.is_primary, false, 'is_primary defaults to false');
    assert.equal(body.created_at, new Date(body.created_at).toISOString(), 'ISO 8601 UTC');
    assert.equal(body.updated_at, body.created_at);
  });

  test('only name is required: other strings default to "", address_line2 and coordinates to null', async () => {
    const { api } = await newUser();
    const res = await api.post('/locations', { name: '  Depot \t' });
    assert.equal(res.statusCode, 201);
    const body = res.json();
    assert.equal(body.name, 'Depot', 'name is trimmed');
    assert.deepEqual(
      [body.address_line1, body.address_line2, body.city, body.state, body.postal_code, body.country, body.latitude, body.longitude],
      ['', null, '', '', '', '', null, null],
    );
  });

  test('coordinates are double precision and accept the exact range limits', async () => {
    const { api } = await newUser();
    // Fifteen significant digits: a double keeps them, a real (float4) column
    // would answer -33.86882 and 151.20929.
    const sydney = { latitude: -33.8688197123456, longitude: 151.209290123456 };
    assert.notEqual(Math.fround(sydney.latitude), sydney.latitude, 'single precision would round the latitude');
    assert.notEqual(Math.fround(sydney.longitude), sydney.longitude, 'single precision would round the longitude');
    const precise = await api.post('/locations', { name: 'Precise', ...sydney });
    assert.equal(precise.statusCode, 201);
    assert.deepEqual({ latitude: precise.json().latitude, longitude: precise.json().longitude }, sydney);
    const read = (await api.get(`/locations/${precise.json().id}`)).json();
    assert.deepEqual({ latitude: read.latitude, longitude: read.longitude }, sydney, 'read back unchanged');
    for (const [latitude, longitude] of [
      [90, 180],
      [-90, -180],
      [0, 0],
    ]) {
      const res = await api.post('/locations', { name: `Edge ${latitude}`, latitude, longitude });
      assert.equal(res.statusCode, 201, `${latitude},${longitude}`);
      assert.deepEqual([res.json().latitude, res.json().longitude], [latitude, longitude]);
    }
    const nulls = await api.post('/locations', { name: 'Nowhere', latitude: null, longitude: null });
    assert.equal(nulls.statusCode, 201);
    assert.deepEqual([nulls.json().latitude, nulls.json().longitude], [null, null]);
  });

  test('strings of exactly 200 characters are accepted, counted in characters', async () => {
    const { api } = await newUser();
    const res = await api.post('/locations', { ...FULL, name: 'é'.repeat(200), city: '🏙'.repeat(200), address_line2: 'x'.repeat(200) });
    assert.equal(res.statusCode, 201);
    assert.equal([...res.json().city].length, 200);
  });

  test('GET /locations lists the primary first, then by name', async () => {
    const { api } = await newUser();
    assert.deepEqual((await api.get('/locations')).json(), [], 'a new organization has none');
    for (const name of ['charlie', 'Bravo', 'alpha']) assert.equal((await api.post('/locations', { name })).statusCode, 201);
    const zulu = (await api.post('/locations', { name: 'zulu', is_primary: true })).json();
    const res = await api.get('/locations');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(
      res.json().map((l: { name: string }) => l.name),
      ['zulu', 'alpha', 'Bravo', 'charlie'],
    );
    assert.deepEqual(res.json()[0], zulu);
  });

  test('GET /locations/{id} returns the record', async () => {
    const { api } = await newUser();
    const created = (await api.post('/locations', FULL)).json();
    const res = await api.get(`/locations/${created.id}`);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), created);
  });

  test('PATCH changes only the fields sent, null clears nullable ones, and updated_at moves', async () => {
    const { api } = await newUser();
    const created = (await api.post('/locations', FULL)).json();
    const renamed = await api.patch(`/locations/${created.id}`, { name: ' Mitte ', city: 'Berlin-Mitte' });
    assert.equal(renamed.statusCode, 200);
    assert.deepEqual(renamed.json(), { ...created, name: 'Mitte', city: 'Berlin-Mitte', updated_at: renamed.json().updated_at });
    assert.ok(renamed.json().updated_at > created.updated_at, 'updated_at moves');
    assert.equal(renamed.json().created_at, created.created_at);

    const cleared = await api.patch(`/locations/${created.id}`, { address_line2: null, latitude: null, longitude: null, postal_code: '' });
    assert.equal(cleared.statusCode, 200);
    assert.deepEqual(
      [cleared.json().address_line2, cleared.json().latitude, cleared.json().longitude, cleared.json().postal_code],
      [null, null, null, ''],
    );
    assert.ok(cleared.json().updated_at > renamed.json().updated_at);
    assert.deepEqual((await api.get(`/locations/${created.id}`)).json(), cleared.json());

    const moved = await api.patch(`/locations/${created.id}`, { latitude: 48.137154, longitude: 11.576124 });
    assert.deepEqual([moved.json().latitude, moved.json().longitude], [48.137154, 11.576124]);
  });

  test('PATCH that changes nothing leaves updated_at alone', async () => {
    const { api } = await newUser();
    const created = (await api.post('/locations', FULL)).json();
    const same = await api.patch(`/locations/${created.id}`, { city: FULL.city });
    assert.equal(same.statusCode, 200);
    assert.equal(same.json().updated_at, created.updated_at);
  });

  test('DELETE /locations/{id} answers 204 and the location is gone', async () => {
    const { api } = await newUser();
    const created = (await api.post('/locations', FULL)).json();
    const res = await api.delete(`/locations/${created.id}`);
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    const gone = await api.get(`/locations/${created.id}`);
    assert.equal(gone.statusCode, 404);
    assert.equal(gone.json().code, 'LOCATION_NOT_FOUND');
    assert.equal((await api.delete(`/locations/${created.id}`)).statusCode, 404);
  });

  test('POST /locations/{id}/primary marks it and clears the previous primary in the same step', async () => {
    const { api } = await newUser();
    const first = (await api.post('/locations', { name: 'First', is_primary: true })).json();
    const second = (await api.post('/locations', { name: 'Second' })).json();
    assert.equal(first.is_primary, true);

    const res = await api.post(`/locations/${second.id}/primary`);
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().id, second.id);
    assert.equal(res.json().is_primary, true);
    assert.ok(res.json().updated_at > second.updated_at);

    const previous = (await api.get(`/locations/${first.id}`)).json();
    assert.equal(previous.is_primary, false);
    assert.ok(previous.updated_at > first.updated_at, 'the cleared location changed too');

    const again = await api.post(`/locations/${second.id}/primary`);
    assert.equal(again.statusCode, 200, 'making the primary primary again is a no-op');
    assert.equal(again.json().updated_at, res.json().updated_at);
  });

  test('the primary endpoint and DELETE accept an empty body sent as application/json', async () => {
    const member = await createMember(t.db.pool);
    const api = asUser(t.app, member.token);
    const location = (await api.post('/locations', { name: 'Empty body' })).json();
    const headers = { 'x-user-token': member.token, 'content-type': 'application/json' };
    const primary = await t.app.inject({ method: 'POST', url: `/locations/${location.id}/primary`, headers });
    assert.equal(primary.statusCode, 200);
    const deleted = await t.app.inject({ method: 'DELETE', url: `/locations/${location.id}`, headers });
    assert.equal(deleted.statusCode, 204);
  });

  test('creating or patching with is_primary: true moves the primary; false leaves none', async () => {
    const { api } = await newUser();
    const a = (await api.post('/locations', { name: 'A', is_primary: true })).json();
    const b = (await api.post('/locations', { name: 'B', is_primary: true })).json();
    assert.equal((await api.get(`/locations/${a.id}`)).json().is_primary, false);
    assert.equal(b.is_primary, true);

    const patched = await api.patch(`/locations/${a.id}`, { is_primary: true });
    assert.equal(patched.json().is_primary, true);
    assert.equal((await api.get(`/locations/${b.id}`)).json().is_primary, false);

    const unmarked = await api.patch(`/locations/${a.id}`, { is_primary: false });
    assert.equal(unmarked.json().is_primary, false);
    const all = (await api.get('/locations')).json() as { is_primary: boolean }[];
    assert.equal(all.filter((l) => l.is_primary).length, 0);
  });

  test('deleting the primary leaves the organization without one', async () => {
    const { api } = await newUser();
    const primary = (await api.post('/locations', { name: 'Only', is_primary: true })).json();
    await api.post('/locations', { name: 'Other' });
    assert.equal((await api.delete(`/locations/${primary.id}`)).statusCode, 204);
    const all = (await api.get('/locations')).json() as { is_primary: boolean }[];
    assert.deepEqual(
      all.map((l) => l.is_primary),
      [false],
    );
  });
});
