// Every validation rule of the service-area schemas, table-driven.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember } from '../helpers/fixtures.ts';

const TOO_LONG = 'x'.repeat(201);

interface Case {
  rule: string;
  body: unknown;
  field: string;
}

const FIELD_CASES: Case[] = [
  { rule: 'label empty', body: { label: '' }, field: 'label' },
  { rule: 'label only whitespace', body: { label: '   ' }, field: 'label' },
  { rule: 'label longer than 200', body: { label: TOO_LONG }, field: 'label' },
  { rule: 'label a number', body: { label: 10115 }, field: 'label' },
  { rule: 'label null', body: { label: null }, field: 'label' },
  { rule: 'label containing U+0000', body: { label: 'x\u0000' }, field: 'label' },
  ...['area_type', 'value', 'country'].flatMap((field) => [
    { rule: `${field} longer than 200`, body: { label: 'l', [field]: TOO_LONG }, field },
    { rule: `${field} not a string`, body: { label: 'l', [field]: ['a'] }, field },
    { rule: `${field} containing U+0000`, body: { label: 'l', [field]: 'a\u0000' }, field },
  ]),
  { rule: 'radius_km zero', body: { label: 'l', radius_km: 0 }, field: 'radius_km' },
  { rule: 'radius_km negative', body: { label: 'l', radius_km: -5 }, field: 'radius_km' },
  { rule: 'radius_km above 20000', body: { label: 'l', radius_km: 20000.001 }, field: 'radius_km' },
  { rule: 'radius_km a numeric string', body: { label: 'l', radius_km: '5' }, field: 'radius_km' },
  { rule: 'location_id not a uuid', body: { label: 'l', location_id: 'hq' }, field: 'location_id' },
  { rule: 'location_id a number', body: { label: 'l', location_id: 1 }, field: 'location_id' },
  {
    rule: 'location_id a urn:uuid (PostgreSQL refuses the prefix)',
    body: { label: 'l', location_id: 'urn:uuid:00000000-0000-4000-8000-000000000000' },
    field: 'location_id',
  },
  { rule: 'unknown field', body: { label: 'l', radius: 5 }, field: 'radius' },
  { rule: 'server-owned field', body: { label: 'l', id: '00000000-0000-4000-8000-000000000000' }, field: 'id' },
  { rule: 'body an array', body: [], field: 'body' },
];

const CREATE_ONLY_CASES: Case[] = [{ rule: 'label missing', body: { area_type: 'city' }, field: 'label' }];
const PATCH_ONLY_CASES: Case[] = [{ rule: 'empty patch', body: {}, field: 'body' }];

describe('service areas: validation', () => {
  let t: TestApp;
  let token: string;
  let orgId: string;
  before(async () => {
    t = await startTestApp();
    const member = await createMember(t.db.pool);
    token = member.token;
    orgId = member.org.id;
  });
  after(() => t.close());

  function send(method: 'POST' | 'PATCH', url: string, body: unknown) {
    return t.app.inject({
      method,
      url,
      headers: { 'x-user-token': token, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
  }

  function assertNamesField(res: Awaited<ReturnType<typeof send>>, field: string, rule: string) {
    assert.equal(res.statusCode, 400, `${rule}: ${res.body}`);
    assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
    const problem = res.json();
    assert.equal(problem.code, 'REQUEST_VALIDATION', rule);
    assert.ok(
      problem.errors.some((e: { field: string }) => e.field === field),
      `${rule}: expected ${field} in ${JSON.stringify(problem.errors)}`,
    );
  }

  async function rows() {
    return (await t.db.pool.query('SELECT * FROM service_areas WHERE organization_id = $1 ORDER BY id', [orgId])).rows;
  }

  test('POST /service-areas refuses each invalid body with a 400 naming the field', async () => {
    const before = await rows();
    for (const { rule, body, field } of [...FIELD_CASES, ...CREATE_ONLY_CASES])
      assertNamesField(await send('POST', '/service-areas', body), field, rule);
    assert.deepEqual(await rows(), before);
  });

  test('PATCH /service-areas/{id} refuses each invalid body with a 400 naming the field', async () => {
    const created = (await send('POST', '/service-areas', { label: 'Target', radius_km: 3 })).json();
    const before = await rows();
    for (const { rule, body, field } of [...FIELD_CASES, ...PATCH_ONLY_CASES]) {
      assertNamesField(await send('PATCH', `/service-areas/${created.id}`, body), field, rule);
    }
    assert.deepEqual(await rows(), before);
  });

  test('a location_id that does not exist is a 400 naming location_id', async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    const created = await send('POST', '/service-areas', { label: 'Orphan', location_id: missing });
    assertNamesField(created, 'location_id', 'create');
    const area = (await send('POST', '/service-areas', { label: 'Real' })).json();
    assertNamesField(await send('PATCH', `/service-areas/${area.id}`, { location_id: missing }), 'location_id', 'patch');
    assert.equal((await t.app.inject({ url: `/service-areas/${area.id}`, headers: { 'x-user-token': token } })).json().location_id, null);
  });

  test('a malformed id is a 400 naming id; an unknown one is 404', async () => {
    const bad = await t.app.inject({ url: '/service-areas/nope', headers: { 'x-user-token': token } });
    assertNamesField(bad, 'id', 'GET malformed');
    const unknown = await t.app.inject({
      method: 'DELETE',
      url: '/service-areas/00000000-0000-4000-8000-000000000000',
      headers: { 'x-user-token': token },
    });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().code, 'SERVICE_AREA_NOT_FOUND');
  });

  test('every request needs a valid x-user-token', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/service-areas', payload: { label: 'l' } });
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().code, 'AUTH_TOKEN_MISSING');
  });

  test('the OpenAPI document carries the rules that are checked', async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json();
    const create = doc.paths['/service-areas'].post.requestBody.content['application/json'].schema;
    assert.equal(create.additionalProperties, false);
    assert.deepEqual(create.required, ['label']);
    assert.deepEqual([create.properties.radius_km.exclusiveMinimum, create.properties.radius_km.maximum], [0, 20000]);
    assert.deepEqual(create.properties.radius_km.type, ['number', 'null']);
    assert.equal(create.properties.location_id.format, 'uuid');
  });
});
