// Form validation on the web pages: the API's schemas decide, and each
// problem is shown beside its field in plain words; nothing is stored.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLocation, getLocation } from '../../src/locations/locations.service.ts';
import { createServiceArea, getServiceArea } from '../../src/service-areas/service-areas.service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember, type Member } from '../helpers/fixtures.ts';
import type { UserAgent } from '../helpers/user-agent.ts';
import { csrfToken, fieldError, signedInAgent } from '../helpers/web.ts';
import { NO_CACHES } from '../../src/cache/caches.ts';

describe('web forms: validation messages beside the fields', () => {
  let t: TestApp;
  let member: Member;
  let agent: UserAgent;
  let csrf: string;
  before(async () => {
    t = await startTestApp({ listen: true });
    member = await createMember(t.db.pool);
    agent = await signedInAgent(t.url, member.email);
    csrf = await csrfToken(agent);
  });
  after(() => t.close());

  const count = async (table: string) => Number((await t.db.pool.query(`SELECT count(*) FROM ${table}`)).rows[0].count);

  const locationCases: [string, Record<string, string>, string, string][] = [
    ['a name of spaces only', { name: '   ' }, 'name', 'Enter a value.'],
    ['no name at all', {}, 'name', 'Enter a value.'],
    ['a name over 200 characters', { name: 'x'.repeat(201) }, 'name', 'Use at most 200 characters.'],
    ['a city over 200 characters', { name: 'A', city: 'c'.repeat(201) }, 'city', 'Use at most 200 characters.'],
    ['a latitude without a longitude', { name: 'A', latitude: '10' }, 'longitude', 'Enter both coordinates, or neither.'],
    ['a longitude without a latitude', { name: 'A', longitude: '10' }, 'latitude', 'Enter both coordinates, or neither.'],
    ['a latitude that is not a number', { name: 'A', latitude: 'north', longitude: '1' }, 'latitude', 'Enter a number.'],
    ['a latitude too large for a double', { name: 'A', latitude: '1e400', longitude: '1' }, 'latitude', 'Enter a number.'],
    ['a longitude below -180', { name: 'A', latitude: '1', longitude: '-180.5' }, 'longitude', 'Must be at least -180.'],
  ];
  for (const [what, form, field, message] of locationCases) {
    test(`new location with ${what}: 400, "${message}" beside ${field}, nothing stored`, async () => {
      const before = await count('locations');
      const res = await agent.post('/ui/locations', { csrf, ...form });
      assert.equal(res.status, 400);
      assert.equal(fieldError(res.body, field), message);
      assert.match(res.body, new RegExp(`id="${field}"[^>]*aria-invalid="true"`));
      assert.match(res.body, /Nothing was saved/);
      assert.equal(await count('locations'), before);
    });
  }

  test('a U+0000 in a field is refused before the page (as on every route), naming the field', async () => {
    const before = await count('locations');
    const res = await agent.post('/ui/locations', { csrf, name: 'A', address_line1: 'a\u0000b' });
    assert.equal(res.status, 400);
    assert.match(res.body, /The field address_line1 must not contain NUL/);
    assert.equal(await count('locations'), before);
  });

  test('coordinates with spaces around them are numbers; empty ones are null', async () => {
    const res = await agent.post('/ui/locations', { csrf, name: 'Spaced', latitude: ' 12.5 ', longitude: '-0.25' });
    assert.equal(res.status, 303);
    const empty = await agent.post('/ui/locations', { csrf, name: 'Nowhere', latitude: '', longitude: ' ' });
    assert.equal(empty.status, 303);
    const { rows } = await t.db.pool.query(
      'SELECT name, latitude, longitude, address_line2 FROM locations WHERE organization_id = $1 ORDER BY name',
      [member.org.id],
    );
    assert.deepEqual(rows, [
      { name: 'Nowhere', latitude: null, longitude: null, address_line2: null },
      { name: 'Spaced', latitude: 12.5, longitude: -0.25, address_line2: null },
    ]);
  });

  test('an invalid edit keeps the stored location unchanged and shows what was typed', async () => {
    const location = await createLocation(t.db.pool, NO_CACHES, member.org.id, { name: 'Stable', latitude: 1, longitude: 2 });
    const res = await agent.post(`/ui/locations/${location.id}`, { csrf, name: 'Renamed', latitude: '91', longitude: '2' });
    assert.equal(res.status, 400);
    assert.equal(fieldError(res.body, 'latitude'), 'Must be at most 90.');
    assert.match(res.body, /value="Renamed"/);
    assert.deepEqual(await getLocation(t.db.pool, member.org.id, location.id), location);
  });

  test('clearing coordinates and the second address line on edit stores null', async () => {
    const location = await createLocation(t.db.pool, NO_CACHES, member.org.id, {
      name: 'Clearable',
      address_line2: 'Floor 2',
      latitude: 1,
      longitude: 2,
    });
    const res = await agent.post(`/ui/locations/${location.id}`, {
      csrf,
      name: 'Clearable',
      address_line2: '',
      latitude: '',
      longitude: '',
    });
    assert.equal(res.status, 303);
    const stored = await getLocation(t.db.pool, member.org.id, location.id);
    assert.deepEqual([stored.address_line2, stored.latitude, stored.longitude], [null, null, null]);
  });

  const areaCases: [string, Record<string, string>, string, string][] = [
    ['no label', { label: '' }, 'label', 'Enter a value.'],
    ['a radius of 0', { label: 'A', radius_km: '0' }, 'radius_km', 'Must be greater than 0.'],
    ['a negative radius', { label: 'A', radius_km: '-5' }, 'radius_km', 'Must be greater than 0.'],
    ['a radius above 20000 km', { label: 'A', radius_km: '20000.5' }, 'radius_km', 'Must be at most 20000.'],
    ['a radius in words', { label: 'A', radius_km: 'ten' }, 'radius_km', 'Enter a number.'],
    ['a location that is not an id', { label: 'A', location_id: 'downtown' }, 'location_id', 'Choose a value from the list.'],
  ];
  for (const [what, form, field, message] of areaCases) {
    test(`new service area with ${what}: 400, "${message}" beside ${field}, nothing stored`, async () => {
      const before = await count('service_areas');
      const res = await agent.post('/ui/service-areas', { csrf, ...form });
      assert.equal(res.status, 400);
      assert.equal(fieldError(res.body, field), message);
      assert.equal(await count('service_areas'), before);
    });
  }

  test('an invalid service-area edit keeps the stored one unchanged', async () => {
    const area = await createServiceArea(t.db.pool, member.org.id, { label: 'Stable area', radius_km: 5 });
    const res = await agent.post(`/ui/service-areas/${area.id}`, { csrf, label: 'Stable area', radius_km: '0' });
    assert.equal(res.status, 400);
    assert.deepEqual(await getServiceArea(t.db.pool, member.org.id, area.id), area);
  });
});
