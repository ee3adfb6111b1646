// Every validation rule of the location schemas, table-driven: each bad
// input is a 400 problem+json that names the field, and nothing is written.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Problem } from '../../src/http/problem-details.plugin.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember } from '../helpers/fixtures.ts';
import { asUser, type TokenClient } from '../helpers/token-client.ts';

const TOO_LONG = 'x'.repeat(201);
const VALID = { name: 'Valid', latitude: 10, longitude: 20 };

interface Case {
  rule: string;
  body: unknown;
  field: string;
}

const OPTIONAL_STRINGS = ['address_line1', 'address_line2', 'city', 'state', 'postal_code', 'country'];
const NON_NULLABLE_STRINGS = ['address_line1', 'city', 'state', 'postal_code', 'country'];

/** Rules shared by create and update (each body also satisfies everything else). */
const FIELD_CASES: Case[] = [
  { rule: 'name empty', body: { name: '' }, field: 'name' },
  { rule: 'name only whitespace', body: { name: ' \t\n ' }, field: 'name' },
  { rule: 'name longer than 200', body: { name: TOO_LONG }, field: 'name' },
  { rule: 'name longer than 200 characters (astral)', body: { name: '😀'.repeat(201) }, field: 'name' },
  { rule: 'name a number', body: { name: 42 }, field: 'name' },
  { rule: 'name null', body: { name: null }, field: 'name' },
  { rule: 'name containing U+0000 (PostgreSQL text cannot store it)', body: { name: 'a\u0000b' }, field: 'name' },
  ...OPTIONAL_STRINGS.map((field) => ({ rule: `${field} longer than 200`, body: { name: 'n', [field]: TOO_LONG }, field })),
  ...OPTIONAL_STRINGS.map((field) => ({ rule: `${field} not a string`, body: { name: 'n', [field]: 7 }, field })),
  ...OPTIONAL_STRINGS.map((field) => ({ rule: `${field} containing U+0000`, body: { name: 'n', [field]: '\u0000' }, field })),
  ...NON_NULLABLE_STRINGS.map((field) => ({ rule: `${field} null`, body: { name: 'n', [field]: null }, field })),
  { rule: 'latitude above 90', body: { name: 'n', latitude: 90.000001, longitude: 0 }, field: 'latitude' },
  { rule: 'latitude below -90', body: { name: 'n', latitude: -91, longitude: 0 }, field: 'latitude' },
  { rule: 'longitude above 180', body: { name: 'n', latitude: 0, longitude: 180.5 }, field: 'longitude' },
  { rule: 'longitude below -180', body: { name: 'n', latitude: 0, longitude: -180.000001 }, field: 'longitude' },
  { rule: 'latitude a numeric string (no coercion)', body: { name: 'n', latitude: '45', longitude: 0 }, field: 'latitude' },
  { rule: 'longitude a boolean', body: { name: 'n', latitude: 0, longitude: true }, field: 'longitude' },
  { rule: 'latitude without longitude', body: { name: 'n', latitude: 45 }, field: 'longitude' },
  { rule: 'longitude without latitude', body: { name: 'n', longitude: 45 }, field: 'latitude' },
  { rule: 'null latitude without longitude', body: { name: 'n', latitude: null }, field: 'longitude' },
  { rule: 'latitude a number, longitude null', body: { name: 'n', latitude: 45, longitude: null }, field: 'longitude' },
  { rule: 'latitude null, longitude a number', body: { name: 'n', latitude: null, longitude: 45 }, field: 'latitude' },
  { rule: 'is_primary a string', body: { name: 'n', is_primary: 'true' }, field: 'is_primary' },
  { rule: 'is_primary null', body: { name: 'n', is_primary: null }, field: 'is_primary' },
  { rule: 'unknown field', body: { name: 'n', color: 'red' }, field: 'color' },
  { rule: 'server-owned field', body: { name: 'n', organization_id: '00000000-0000-0000-0000-000000000000' }, field: 'organization_id' },
  { rule: 'body an array', body: [{ name: 'n' }], field: 'body' },
];

const CREATE_ONLY_CASES: Case[] = [
  { rule: 'name missing', body: { city: 'Berlin' }, field: 'name' },
  { rule: 'body a string', body: 'name', field: 'body' },
];

const PATCH_ONLY_CASES: Case[] = [{ rule: 'empty patch', body: {}, field: 'body' }];

function assertNamesField(res: { statusCode: number; headers: Record<string, unknown>; json(): Problem }, field: string, rule: string) {
  assert.equal(res.statusCode, 400, rule);
  assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8', rule);
  const problem = res.json();
  assert.equal(problem.code, 'REQUEST_VALIDATION', rule);
  assert.equal(problem.status, 400, rule);
  assert.ok(
    problem.errors?.some((e) => e.field === field),
    `${rule}: expected field ${field}, got ${JSON.stringify(problem.errors)}`,
  );
}

describe('locations: validation', () => {
  let t: TestApp;
  let api: TokenClient;
  let token: string;
  let orgId: string;
  before(async () => {
    t = await startTestApp();
    const member = await createMember(t.db.pool);
    api = asUser(t.app, member.token);
    token = member.token;
    orgId = member.org.id;
  });
  after(() => t.close());

  async function count(): Promise<number> {
    const { rows } = await t.db.pool.query('SELECT count(*)::int AS n FROM locations WHERE organization_id = $1', [orgId]);
    return rows[0].n;
  }

  test('POST /locations refuses each invalid body with a 400 naming the field', async () => {
    const before = await count();
    for (const { rule, body, field } of [...FIELD_CASES, ...CREATE_ONLY_CASES]) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/locations',
        headers: { 'x-user-token': token, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });
      assertNamesField(res, field, `POST ${rule}`);
    }
    assert.equal(await count(), before, 'nothing was written');
  });

  test('PATCH /locations/{id} refuses each invalid body with a 400 naming the field, leaving the row as it was', async () => {
    const created = (await api.post('/locations', VALID)).json();
    for (const { rule, body, field } of [...FIELD_CASES, ...PATCH_ONLY_CASES]) {
      const res = await t.app.inject({
        method: 'PATCH',
        url: `/locations/${created.id}`,
        headers: { 'x-user-token': token, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });
      assertNamesField(res, field, `PATCH ${rule}`);
    }
    assert.deepEqual((await api.get(`/locations/${created.id}`)).json(), created);
  });

  test('PATCH must send latitude and longitude together, even when one is stored already', async () => {
    const created = (await api.post('/locations', VALID)).json();
    assertNamesField(await api.patch(`/locations/${created.id}`, { latitude: 11 }), 'longitude', 'latitude alone');
    assertNamesField(await api.patch(`/locations/${created.id}`, { longitude: null }), 'latitude', 'clearing one side');
  });

  test('a malformed id is a 400 naming id', async () => {
    const urn = '/locations/urn:uuid:00000000-0000-4000-8000-000000000000';
    for (const [method, url] of [
      ['GET', '/locations/not-a-uuid'],
      ['PATCH', '/locations/123'],
      ['DELETE', '/locations/x'],
      ['POST', '/locations/x/primary'],
      ['GET', urn],
    ] as const) {
      const res = await t.app.inject({
        method,
        url,
        headers: { 'x-user-token': token },
        ...(method === 'PATCH' ? { payload: { name: 'n' } } : {}),
      });
      assertNamesField(res, 'id', `${method} ${url}`);
    }
  });

  test('malformed JSON is a 400 problem naming the body', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/locations',
      headers: { 'x-user-token': token, 'content-type': 'application/json' },
      payload: '{"name": "x",',
    });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().code, 'REQUEST_INVALID_JSON');
    assert.deepEqual(res.json().errors, [{ field: 'body', message: 'is not valid JSON' }]);
  });

  test('an empty POST /locations body is a 400 naming the body', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/locations',
      headers: { 'x-user-token': token, 'content-type': 'application/json' },
    });
    assertNamesField(res, 'body', 'empty body');
  });

  test('a body over 64 KiB is 413', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/locations',
      headers: { 'x-user-token': token, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'n', city: 'x'.repeat(70_000) }),
    });
    assert.equal(res.statusCode, 413);
    assert.equal(res.json().code, 'REQUEST_BODY_TOO_LARGE');
  });

  test('every request needs a valid x-user-token', async () => {
    const missing = await t.app.inject({ method: 'GET', url: '/locations' });
    assert.equal(missing.statusCode, 401);
    assert.equal(missing.json().code, 'AUTH_TOKEN_MISSING');
    const wrong = await t.app.inject({ method: 'POST', url: '/locations', headers: { 'x-user-token': 'sbu_wrong' }, payload: VALID });
    assert.equal(wrong.statusCode, 401);
    assert.equal(wrong.json().code, 'AUTH_TOKEN_INVALID');
  });

  test('the OpenAPI document carries the rules that are checked', async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json();
    const create = doc.paths['/locations'].post.requestBody.content['application/json'].schema;
    assert.equal(create.additionalProperties, false);
    assert.deepEqual(create.required, ['name']);
    assert.deepEqual(create.dependentRequired, { latitude: ['longitude'], longitude: ['latitude'] });
    assert.deepEqual([create.properties.latitude.minimum, create.properties.latitude.maximum], [-90, 90]);
    assert.deepEqual([create.properties.longitude.minimum, create.properties.longitude.maximum], [-180, 180]);
    assert.equal(create.properties.name.maxLength, 200);
    assert.equal(create.properties.name.pattern, '\\S');
    const patch = doc.paths['/locations/{id}'].patch.requestBody.content['application/json'].schema;
    assert.equal(patch.minProperties, 1);
    assert.equal(patch.required, undefined);
  });
});
