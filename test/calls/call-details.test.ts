// A call's details (docs/interface.md §12): given at creation or completion,
// numbers read in any spelling and kept in E.164, bad input a 400 naming the
// field, names kept as they were at completion, GET /calls searching them, and
// requests without them keeping their idempotency fingerprint.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { fingerprint } from '../../src/calls/idempotency.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember, type Member } from '../helpers/fixtures.ts';
import { connectPlatform } from '../helpers/webhooks.ts';

describe('call details', () => {
  let t: TestApp;
  let member: Member;
  let agentId: string;
  let locationId: string;
  before(async () => {
    t = await startTestApp();
    member = await createMember(t.db.pool);
    const agent = await t.db.pool.query<{ id: string }>(`INSERT INTO agents (organization_id, name) VALUES ($1, 'Ada') RETURNING id`, [
      member.org.id,
    ]);
    agentId = agent.rows[0]!.id;
    locationId = (await post('/locations', { name: 'Leeds' })).json().id;
  });
  after(() => t.close());

  function post(url: string, payload: unknown, headers: Record<string, string> = {}) {
    return t.app.inject({ method: 'POST', url, headers: { 'x-user-token': member.token, ...headers }, payload: payload as object });
  }
  const get = (url: string) => t.app.inject({ url, headers: { 'x-user-token': member.token } });

  const EVERY = {
    direction: 'inbound',
    from_number: '+44 20 7946 0123',
    to_number: '+1 (415) 555-0199',
    recording_url: 'https://recordings.example/r/1.mp3',
    transcript: 'Caller: hello',
    metadata: { crm_id: 'C-1' },
  };

  test('every field given at creation is stored and answered, numbers in E.164, names beside the ids', async () => {
    const res = await post('/calls', { ...EVERY, agent_id: agentId, location_id: locationId, summary: 's', duration_seconds: 9 });
    assert.equal(res.statusCode, 201);
    const call = res.json();
    assert.equal(call.from_number, '+442079460123');
    assert.equal(call.to_number, '+14155550199');
    assert.equal(call.direction, 'inbound');
    assert.equal(call.agent_name, 'Ada');
    assert.equal(call.location_name, 'Leeds');
    assert.equal(call.recording_url, EVERY.recording_url);
    assert.deepEqual(call.metadata, { crm_id: 'C-1' });
    assert.equal(call.url, `${t.config.baseUrl}/ui/calls/${call.id}`);
    assert.deepEqual((await get(`/calls/${call.id}`)).json(), call);
  });

  test('a detail given at completion replaces the one given at creation; the others stay; null clears', async () => {
    const created = (await post('/calls', { ...EVERY, location_id: locationId })).json();
    assert.equal(created.status, 'in_progress');
    const done = await post(`/calls/${created.id}/complete`, {
      summary: 'done',
      duration_seconds: 3,
      direction: 'outbound',
      from_number: null,
      metadata: {},
    });
    assert.equal(done.statusCode, 200);
    const call = done.json();
    assert.equal(call.direction, 'outbound');
    assert.equal(call.from_number, null);
    assert.equal(call.to_number, '+14155550199');
    assert.equal(call.location_name, 'Leeds');
    assert.deepEqual(call.metadata, {});
  });

  test('names are kept with the call: a rename later changes neither the call nor its replay', async () => {
    const agent = await t.db.pool.query<{ id: string }>(`INSERT INTO agents (organization_id, name) VALUES ($1, 'Bea') RETURNING id`, [
      member.org.id,
    ]);
    const key = randomUUID();
    const body = { agent_id: agent.rows[0]!.id, summary: 'kept', duration_seconds: 1 };
    const first = await post('/calls', body, { 'idempotency-key': key });
    await t.db.pool.query(`UPDATE agents SET name = 'Renamed' WHERE id = $1`, [agent.rows[0]!.id]);
    assert.equal((await get(`/calls/${first.json().id}`)).json().agent_name, 'Bea');
    const again = await post('/calls', body, { 'idempotency-key': key });
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body, first.body);
  });

  test('a request without the new fields keeps the fingerprint it always had', async () => {
    const key = randomUUID();
    const res = await post('/calls', { summary: 'old shape', duration_seconds: 4 }, { 'idempotency-key': key });
    assert.equal(res.statusCode, 201);
    const { rows } = await t.db.pool.query<{ fingerprint: Buffer }>('SELECT fingerprint FROM idempotency_keys WHERE key = $1', [key]);
    assert.deepEqual(rows[0]!.fingerprint, fingerprint('POST /calls', [null, 'old shape', 4]));
    // With a detail, the same key is another request: 422.
    const other = await post('/calls', { summary: 'old shape', duration_seconds: 4, direction: 'inbound' }, { 'idempotency-key': key });
    assert.equal(other.statusCode, 422);
  });

  const BAD: [string, Record<string, unknown>][] = [
    ['direction', { direction: 'sideways' }],
    ['from_number', { from_number: '020 7946 0123' }],
    ['from_number', { from_number: '+44 20 7946 012' }],
    ['to_number', { to_number: '+1 555 0100' }],
    ['to_number', { to_number: 'call me' }],
    ['from_number', { from_number: `+44${'1'.repeat(80)}` }],
    ['recording_url', { recording_url: 'http://recordings.example/a' }],
    ['recording_url', { recording_url: `https://r.example/${'a'.repeat(2048)}` }],
    ['transcript', { transcript: 'a'.repeat(50_001) }],
    ['metadata', { metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])) }],
    ['metadata.n', { metadata: { n: 1 } }],
    ['metadata', { metadata: { ['k'.repeat(41)]: 'v' } }],
    ['metadata', { metadata: { '': 'v' } }],
    ['metadata.k', { metadata: { k: 'v'.repeat(501) } }],
    ['location_id', { location_id: randomUUID() }],
  ];
  for (const [field, body] of BAD) {
    test(`${JSON.stringify(body).slice(0, 60)}: 400 naming ${field}, nothing written`, async () => {
      const before = (await t.db.pool.query('SELECT count(*)::int AS n FROM calls')).rows[0].n;
      for (const res of [
        await post('/calls', body),
        await post('/calls', { ...body, summary: 's', duration_seconds: 1 }),
        await post(`/calls/${(await post('/calls', {})).json().id}/complete`, { ...body, summary: 's', duration_seconds: 1 }),
      ]) {
        assert.equal(res.statusCode, 400, res.body);
        assert.ok(
          res.json().errors.some((e: { field: string }) => e.field.startsWith(field)),
          res.body,
        );
      }
      assert.equal((await t.db.pool.query('SELECT count(*)::int AS n FROM calls')).rows[0].n, before + 1);
    });
  }

  test("another organization's location is a 400 naming location_id", async () => {
    const other = await createMember(t.db.pool);
    const theirs = await t.app.inject({
      method: 'POST',
      url: '/locations',
      headers: { 'x-user-token': other.token },
      payload: { name: 'X' },
    });
    const res = await post('/calls', { location_id: theirs.json().id, summary: 's', duration_seconds: 1 });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().errors[0].field, 'location_id');
  });

  test('the two calls routes take a 256 KiB body (a 50,000-character transcript); others keep 64 KiB', async () => {
    const transcript = '☎'.repeat(50_000);
    const res = await post('/calls', { transcript, summary: 's', duration_seconds: 1 });
    assert.equal(res.statusCode, 201);
    assert.equal(res.json().transcript.length, 50_000);
    const created = (await post('/calls', {})).json();
    assert.equal((await post(`/calls/${created.id}/complete`, { transcript, summary: 's', duration_seconds: 1 })).statusCode, 200);
    const tooBig = await post('/calls', { transcript: 'a'.repeat(300 * 1024), summary: 's', duration_seconds: 1 });
    assert.equal(tooBig.statusCode, 413);
    const location = await post('/locations', { name: 'n', address_line1: '☎'.repeat(30_000) });
    assert.equal(location.statusCode, 413);
  });

  test('GET /calls finds a call by either number in any spelling, and by each filter; nothing found is []', async () => {
    const org = await createMember(t.db.pool);
    const as = (url: string) => t.app.inject({ url, headers: { 'x-user-token': org.token } });
    const make = (body: Record<string, unknown>) =>
      t.app.inject({ method: 'POST', url: '/calls', headers: { 'x-user-token': org.token }, payload: body }).then((r) => r.json());
    const a = await make({ from_number: '+442079460123', to_number: '+14155550199', direction: 'inbound' });
    const b = await make({ from_number: '+14155550199', to_number: '+442079460999', direction: 'outbound' });
    const ids = async (query: string) => (await as(`/calls?${query}`)).json().map((c: { id: string }) => c.id);
    assert.deepEqual(await ids('number=%2B14155550199'), [b.id, a.id]);
    assert.deepEqual(await ids('number=+1%20(415)%20555-0199'), [b.id, a.id], 'a leading space is read as +');
    assert.deepEqual(await ids('number=%2B44%2020%207946%200123'), [a.id]);
    assert.deepEqual(await ids('from_number=%2B14155550199'), [b.id]);
    assert.deepEqual(await ids('to_number=%2B14155550199'), [a.id]);
    assert.deepEqual(await ids('direction=outbound'), [b.id]);
    assert.deepEqual(await ids('number=%2B33142685300'), []);
    assert.deepEqual(await ids(`since=${encodeURIComponent(b.created_at)}`), [b.id]);
    assert.deepEqual(await ids(`until=${encodeURIComponent(b.created_at)}`), [a.id]);
    for (const [query, field] of [
      ['number=020', 'number'],
      ['from_number=abc', 'from_number'],
      ['until=yesterday', 'until'],
      ['since=2026-13-01', 'since'],
      ['direction=up', 'direction'],
      ['location_id=x', 'location_id'],
    ]) {
      const res = await as(`/calls?${query}`);
      assert.equal(res.statusCode, 400, query);
      assert.equal(res.json().errors[0].field, field, query);
    }
  });

  test('GET /calls searches with the platform headers and calls:read; agent and location filters', async () => {
    const org = await connectPlatform(t);
    const headers = { 'x-user-token': org.member.token };
    const agent = await t.db.pool.query<{ id: string }>(`INSERT INTO agents (organization_id, name) VALUES ($1, 'Cy') RETURNING id`, [
      org.member.org.id,
    ]);
    const loc = (await t.app.inject({ method: 'POST', url: '/locations', headers, payload: { name: 'York' } })).json();
    const mk = (payload: object) => t.app.inject({ method: 'POST', url: '/calls', headers, payload }).then((r) => r.json());
    const withAgent = await mk({ agent_id: agent.rows[0]!.id });
    const atLocation = await mk({ location_id: loc.id });
    await mk({});
    const search = (q: string) =>
      t.app.inject({ url: `/calls?${q}`, headers: org.headers }).then((r) => r.json().map((c: { id: string }) => c.id));
    assert.deepEqual(await search(`agent_id=${agent.rows[0]!.id}`), [withAgent.id]);
    assert.deepEqual(await search(`location_id=${loc.id}`), [atLocation.id]);
    assert.deepEqual(await search(`location_id=${randomUUID()}`), []);
  });
});
