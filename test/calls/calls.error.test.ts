import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Problem } from '../../src/http/problem-details.plugin.ts';
import type { TestApp } from '../helpers/app.ts';
import { createMember, type Member } from '../helpers/fixtures.ts';
import { startWebhookApp } from '../helpers/webhooks.ts';

describe('calls refuse bad input with 400 naming the field', () => {
  let t: TestApp;
  let member: Member;
  before(async () => {
    t = await startWebhookApp();
    member = await createMember(t.db.pool);
  });
  after(() => t.close());

  const post = (url: string, payload: unknown) =>
    t.app.inject({ method: 'POST', url, headers: { 'x-user-token': member.token }, payload: payload as object });

  function assertField(res: { statusCode: number; json(): Problem }, field: string) {
    assert.equal(res.statusCode, 400, JSON.stringify(res.json()));
    assert.ok(
      res.json().errors?.some((e) => e.field === field),
      JSON.stringify(res.json()),
    );
  }

  const createCases: [string, unknown, string][] = [
    ['summary without duration', { summary: 'x' }, 'duration_seconds'],
    ['duration without summary', { duration_seconds: 3 }, 'summary'],
    ['empty summary', { summary: '', duration_seconds: 3 }, 'summary'],
    ['summary too long', { summary: 'x'.repeat(10_001), duration_seconds: 3 }, 'summary'],
    ['negative duration', { summary: 'x', duration_seconds: -1 }, 'duration_seconds'],
    ['fractional duration', { summary: 'x', duration_seconds: 1.5 }, 'duration_seconds'],
    ['duration as text', { summary: 'x', duration_seconds: '3' }, 'duration_seconds'],
    ['malformed agent_id', { agent_id: 'ava' }, 'agent_id'],
    ['unknown agent_id', { agent_id: '00000000-0000-4000-8000-000000000000' }, 'agent_id'],
    ['unknown field', { summary: 'x', duration_seconds: 3, status: 'completed' }, 'status'],
  ];
  for (const [name, payload, field] of createCases) {
    test(`POST /calls: ${name}`, async () => assertField(await post('/calls', payload), field));
  }

  test("POST /calls with another organization's agent is refused", async () => {
    const other = await createMember(t.db.pool);
    const { rows } = await t.db.pool.query("INSERT INTO agents (organization_id, name) VALUES ($1, 'Theirs') RETURNING id", [other.org.id]);
    assertField(await post('/calls', { agent_id: rows[0].id }), 'agent_id');
  });

  test('POST /calls/{id}/complete needs summary and duration_seconds', async () => {
    const call = (await post('/calls', {})).json();
    assertField(await post(`/calls/${call.id}/complete`, { duration_seconds: 1 }), 'summary');
    assertField(await post(`/calls/${call.id}/complete`, { summary: 'x' }), 'duration_seconds');
    assertField(await post('/calls/not-a-uuid/complete', { summary: 'x', duration_seconds: 1 }), 'id');
    const unknown = await post('/calls/00000000-0000-4000-8000-000000000000/complete', { summary: 'x', duration_seconds: 1 });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().code, 'CALL_NOT_FOUND');
  });

  test('GET /calls refuses a bad limit, status or cursor', async () => {
    const get = (url: string) => t.app.inject({ url, headers: { 'x-user-token': member.token } });
    assertField(await get('/calls?limit=0'), 'limit');
    assertField(await get('/calls?limit=101'), 'limit');
    assertField(await get('/calls?status=ringing'), 'status');
    assertField(await get('/calls?cursor=nope'), 'cursor');
    assertField(await get('/calls?cursor=00000000-0000-4000-8000-000000000000'), 'cursor');
  });

  test('malformed JSON is a 400 problem', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/calls',
      headers: { 'x-user-token': member.token, 'content-type': 'application/json' },
      payload: '{"summary":',
    });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().code, 'REQUEST_INVALID_JSON');
  });
});
