import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { createMember } from '../helpers/fixtures.ts';
import { createClient } from '../helpers/oauth.ts';
import { completeCall, connectPlatform, startWebhookApp } from '../helpers/webhooks.ts';

describe('calls: organization boundaries and GET /calls/recent', () => {
  let t: TestApp;
  before(async () => {
    t = await startWebhookApp();
  });
  after(() => t.close());

  test("another organization's call is 404 for reading and completing, and never listed", async () => {
    const mine = await createMember(t.db.pool);
    const theirs = await createMember(t.db.pool);
    const call = (await t.app.inject({ method: 'POST', url: '/calls', headers: { 'x-user-token': theirs.token }, payload: {} })).json();
    const headers = { 'x-user-token': mine.token };
    const read = await t.app.inject({ url: `/calls/${call.id}`, headers });
    assert.equal(read.statusCode, 404);
    assert.equal(read.json().code, 'CALL_NOT_FOUND');
    const complete = await t.app.inject({
      method: 'POST',
      url: `/calls/${call.id}/complete`,
      headers,
      payload: { summary: 'hijack', duration_seconds: 1 },
    });
    assert.equal(complete.statusCode, 404);
    const list = await t.app.inject({ url: '/calls', headers });
    assert.deepEqual(list.json(), []);
    const stillTheirs = await t.app.inject({ url: `/calls/${call.id}`, headers: { 'x-user-token': theirs.token } });
    assert.equal(stillTheirs.json().status, 'in_progress');
    const cursor = await t.app.inject({ url: `/calls?cursor=${call.id}`, headers });
    assert.equal(cursor.statusCode, 400, "another organization's call is not a cursor");
  });

  test('calls routes need a credential', async () => {
    for (const [method, url] of [
      ['GET', '/calls'],
      ['POST', '/calls'],
      ['GET', '/calls/recent'],
    ] as const) {
      const res = await t.app.inject({ method, url, ...(method === 'POST' ? { payload: {} } : {}) });
      assert.equal(res.statusCode, 401, `${method} ${url}`);
    }
  });

  test("/calls/recent: the caller organization's completed calls, newest first, in the event's shape", async () => {
    const org = await connectPlatform(t);
    const other = await connectPlatform(t, { client: org.client });
    const calls = [];
    for (let i = 0; i < 3; i++) calls.push(await completeCall(t, org.member, { summary: `call ${i}`, duration_seconds: 10 + i }));
    await completeCall(t, other.member, { summary: 'not yours' });
    await t.app.inject({ method: 'POST', url: '/calls', headers: { 'x-user-token': org.member.token }, payload: {} }); // in progress: not a sample

    const res = await t.app.inject({ url: '/calls/recent', headers: org.headers });
    assert.equal(res.statusCode, 200);
    const recent = res.json();
    assert.deepEqual(
      recent.map((c: { id: string }) => c.id),
      calls.map((c) => c.id).reverse(),
    );
    assert.deepEqual(recent[0], {
      id: calls[2]!.id,
      organization_id: org.member.org.id,
      created_at: calls[2]!.created_at,
      summary: 'call 2',
      duration_seconds: 12,
      agent_id: null,
      direction: null,
      from_number: null,
      to_number: null,
      agent_name: null,
      location_id: null,
      location_name: null,
      recording_url: null,
      transcript: null,
      metadata: {},
      url: `${t.config.baseUrl}/ui/calls/${calls[2]!.id}`,
    });
    assert.deepEqual(Object.keys(recent[0]).slice(0, 6), [
      'id',
      'organization_id',
      'created_at',
      'summary',
      'duration_seconds',
      'agent_id',
    ]);

    const limited = await t.app.inject({ url: '/calls/recent?limit=1', headers: org.headers });
    assert.deepEqual(
      limited.json().map((c: { id: string }) => c.id),
      [calls[2]!.id],
    );
    for (const limit of ['0', '101', 'ten']) {
      const bad = await t.app.inject({ url: `/calls/recent?limit=${limit}`, headers: org.headers });
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().errors[0].field, 'limit');
    }
  });

  test('/calls/recent is an empty array when there are none, and defaults to 10', async () => {
    const org = await connectPlatform(t);
    const empty = await t.app.inject({ url: '/calls/recent', headers: org.headers });
    assert.equal(empty.statusCode, 200);
    assert.deepEqual(empty.json(), []);
    for (let i = 0; i < 12; i++) await completeCall(t, org.member, { summary: `n${i}` });
    const recent = await t.app.inject({ url: '/calls/recent', headers: org.headers });
    assert.equal(recent.json().length, 10);
    assert.equal(recent.json()[0].summary, 'n11');
    const hundred = await t.app.inject({ url: '/calls/recent?limit=100', headers: org.headers });
    assert.equal(hundred.json().length, 12);
  });

  test('/calls/recent needs all three platform headers and calls:read', async () => {
    const org = await connectPlatform(t);
    const get = (headers: Record<string, string>) => t.app.inject({ url: '/calls/recent', headers });
    const { authorization, 'x-client-id': clientId, 'x-client-secret': clientSecret } = org.headers;
    const other = await createClient(t.db.pool, { name: 'Someone Else' });
    const cases: [string, Record<string, string>, string][] = [
      ['nothing', {}, 'OAUTH_TOKEN_MISSING'],
      ['bearer only', { authorization: authorization! }, 'OAUTH_CLIENT_MISSING'],
      ['no secret', { authorization: authorization!, 'x-client-id': clientId! }, 'OAUTH_CLIENT_MISSING'],
      ['no id', { authorization: authorization!, 'x-client-secret': clientSecret! }, 'OAUTH_CLIENT_MISSING'],
      ['no bearer', { 'x-client-id': clientId!, 'x-client-secret': clientSecret! }, 'OAUTH_TOKEN_MISSING'],
      ['wrong secret', { ...org.headers, 'x-client-secret': `${clientSecret}x` }, 'OAUTH_CLIENT_INVALID'],
      [
        'another client',
        { ...org.headers, 'x-client-id': other.client_id, 'x-client-secret': other.client_secret },
        'OAUTH_CLIENT_INVALID',
      ],
      ['expired-looking token', { ...org.headers, authorization: 'Bearer sba_expired' }, 'OAUTH_TOKEN_INVALID'],
      ['x-user-token', { 'x-user-token': org.member.token }, 'OAUTH_TOKEN_MISSING'],
    ];
    for (const [name, headers, code] of cases) {
      const res = await get(headers);
      assert.equal(res.statusCode, 401, name);
      assert.equal(res.json().code, code, name);
    }
    const noScope = await connectPlatform(t, { scopes: ['calls:write'] });
    assert.equal((await get(noScope.headers)).statusCode, 403);
    assert.equal((await get(org.headers)).statusCode, 200);
  });
});
