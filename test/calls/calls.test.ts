import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { createMember } from '../helpers/fixtures.ts';
import { connectPlatform, startWebhookApp } from '../helpers/webhooks.ts';

describe('calls ingest and reading', () => {
  let t: TestApp;
  before(async () => {
    t = await startWebhookApp();
  });
  after(() => t.close());

  const as = (token: string) => ({ 'x-user-token': token });

  test('POST /calls creates an in-progress call; completing it fires call.completed once; completing again is 409', async () => {
    const member = await createMember(t.db.pool);
    const created = await t.app.inject({ method: 'POST', url: '/calls', headers: as(member.token), payload: {} });
    assert.equal(created.statusCode, 201);
    const call = created.json();
    assert.deepEqual(Object.keys(call).sort(), [
      'agent_id',
      'agent_name',
      'completed_at',
      'created_at',
      'direction',
      'duration_seconds',
      'from_number',
      'id',
      'location_id',
      'location_name',
      'metadata',
      'organization_id',
      'recording_url',
      'status',
      'summary',
      'to_number',
      'transcript',
      'url',
    ]);
    assert.equal(call.status, 'in_progress');
    assert.equal(call.organization_id, member.org.id);
    assert.equal(call.completed_at, null);
    assert.equal(created.headers.location, `/calls/${call.id}`);

    const completed = await t.app.inject({
      method: 'POST',
      url: `/calls/${call.id}/complete`,
      headers: as(member.token),
      payload: { summary: 'Asked for a quote', duration_seconds: 95 },
    });
    assert.equal(completed.statusCode, 200);
    assert.equal(completed.json().status, 'completed');
    assert.equal(completed.json().summary, 'Asked for a quote');
    assert.equal(completed.json().duration_seconds, 95);
    assert.ok(Date.parse(completed.json().completed_at) >= Date.parse(call.created_at));

    const twice = await t.app.inject({
      method: 'POST',
      url: `/calls/${call.id}/complete`,
      headers: as(member.token),
      payload: { summary: 'Again', duration_seconds: 1 },
    });
    assert.equal(twice.statusCode, 409);
    assert.equal(twice.json().code, 'CALL_ALREADY_COMPLETED');
    const fetched = await t.app.inject({ url: `/calls/${call.id}`, headers: as(member.token) });
    assert.equal(fetched.json().summary, 'Asked for a quote', 'the second completion changed nothing');
  });

  test('POST /calls without any body creates an in-progress call', async () => {
    const member = await createMember(t.db.pool);
    const bare = await t.app.inject({ method: 'POST', url: '/calls', headers: as(member.token) });
    assert.equal(bare.statusCode, 201);
    assert.equal(bare.json().status, 'in_progress');
    const emptyJson = await t.app.inject({
      method: 'POST',
      url: '/calls',
      headers: { ...as(member.token), 'content-type': 'application/json' },
    });
    assert.equal(emptyJson.statusCode, 201);
    assert.equal(emptyJson.json().agent_id, null);
  });

  test('POST /calls with summary and duration records a completed call directly', async () => {
    const member = await createMember(t.db.pool);
    const res = await t.app.inject({
      method: 'POST',
      url: '/calls',
      headers: as(member.token),
      payload: { summary: 'Done', duration_seconds: 0 },
    });
    assert.equal(res.statusCode, 201);
    assert.equal(res.json().status, 'completed');
    assert.equal(res.json().duration_seconds, 0);
    assert.ok(res.json().completed_at);
  });

  test('completing a call writes one delivery per active subscription in the same transaction', async () => {
    const org = await connectPlatform(t);
    for (const path of ['/one', '/two']) {
      await t.app.inject({
        method: 'POST',
        url: '/webhooks/subscribe',
        headers: org.headers,
        payload: { hookUrl: `https://127.0.0.1:9${path}` },
      });
    }
    const inProgress = (await t.app.inject({ method: 'POST', url: '/calls', headers: as(org.member.token), payload: {} })).json();
    const none = await t.db.pool.query('SELECT 1 FROM webhook_deliveries WHERE call_id = $1', [inProgress.id]);
    assert.equal(none.rowCount, 0, 'an in-progress call fires nothing');
    await t.app.inject({
      method: 'POST',
      url: `/calls/${inProgress.id}/complete`,
      headers: as(org.member.token),
      payload: { summary: 's', duration_seconds: 3 },
    });
    const { rows } = await t.db.pool.query('SELECT body FROM webhook_deliveries WHERE call_id = $1', [inProgress.id]);
    assert.equal(rows.length, 2);
    // The seed's six fields first, as they always were; then the details (docs/interface.md §2.3).
    assert.deepEqual(Object.keys(JSON.parse(rows[0].body)), [
      'id',
      'organization_id',
      'created_at',
      'summary',
      'duration_seconds',
      'agent_id',
      'direction',
      'from_number',
      'to_number',
      'agent_name',
      'location_id',
      'location_name',
      'recording_url',
      'transcript',
      'metadata',
      'url',
    ]);
  });

  test('concurrent completions: exactly one wins, the others get 409, one set of deliveries', async () => {
    const org = await connectPlatform(t);
    await t.app.inject({
      method: 'POST',
      url: '/webhooks/subscribe',
      headers: org.headers,
      payload: { hookUrl: 'https://127.0.0.1:9/race' },
    });
    const call = (await t.app.inject({ method: 'POST', url: '/calls', headers: as(org.member.token), payload: {} })).json();
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        t.app.inject({
          method: 'POST',
          url: `/calls/${call.id}/complete`,
          headers: as(org.member.token),
          payload: { summary: `attempt ${i}`, duration_seconds: i },
        }),
      ),
    );
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 409, 409, 409, 409]);
    const { rows } = await t.db.pool.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE call_id = $1', [call.id]);
    assert.equal(rows[0].n, 1);
  });

  test('GET /calls lists newest first and pages with a Link header', async () => {
    const member = await createMember(t.db.pool);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await t.app.inject({ method: 'POST', url: '/calls', headers: as(member.token), payload: {} })).json().id);
    }
    const first = await t.app.inject({ url: '/calls?limit=2', headers: as(member.token) });
    assert.equal(first.statusCode, 200);
    assert.deepEqual(
      first.json().map((c: { id: string }) => c.id),
      [ids[4], ids[3]],
    );
    const seen = [...first.json()];
    let link = first.headers.link as string | undefined;
    while (link) {
      const next = new URL(/^<([^>]+)>; rel="next"$/.exec(link)![1]!);
      assert.equal(next.origin, t.config.baseUrl);
      const page = await t.app.inject({ url: `${next.pathname}${next.search}`, headers: as(member.token) });
      seen.push(...page.json());
      link = page.headers.link as string | undefined;
    }
    assert.deepEqual(
      seen.map((c: { id: string }) => c.id),
      [...ids].reverse(),
    );
    const completedOnly = await t.app.inject({ url: '/calls?status=completed', headers: as(member.token) });
    assert.deepEqual(completedOnly.json(), []);
  });

  test('an OAuth caller with calls:write may ingest; calls:read may read but not write', async () => {
    const writer = await connectPlatform(t, { scopes: ['calls:read', 'calls:write'] });
    const created = await t.app.inject({
      method: 'POST',
      url: '/calls',
      headers: writer.headers,
      payload: { summary: 'via oauth', duration_seconds: 5 },
    });
    assert.equal(created.statusCode, 201);
    assert.equal(created.json().organization_id, writer.member.org.id);
    const read = await t.app.inject({ url: `/calls/${created.json().id}`, headers: writer.headers });
    assert.equal(read.statusCode, 200);

    const reader = await connectPlatform(t, { scopes: ['calls:read'] });
    const refused = await t.app.inject({ method: 'POST', url: '/calls', headers: reader.headers, payload: {} });
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.json().code, 'OAUTH_INSUFFICIENT_SCOPE');
    const writeOnly = await connectPlatform(t, { scopes: ['calls:write'] });
    const noRead = await t.app.inject({ url: '/calls', headers: writeOnly.headers });
    assert.equal(noRead.statusCode, 403);
  });

  // A stolen access token without the client's secret does nothing.
  test('an access token alone neither reads nor writes calls: every OAuth route needs the client headers', async () => {
    const writer = await connectPlatform(t, { scopes: ['calls:read', 'calls:write'] });
    const existing = await t.app.inject({ method: 'POST', url: '/calls', headers: writer.headers, payload: {} });
    assert.equal(existing.statusCode, 201);
    const id = existing.json().id as string;
    const bare = { authorization: `Bearer ${writer.accessToken}` };
    const wrongSecret = { ...writer.headers, 'x-client-secret': 'not-the-secret' };
    const attempts = [
      { method: 'GET' as const, url: '/calls' },
      { method: 'POST' as const, url: '/calls', payload: { summary: 'forged', duration_seconds: 1 } },
      { method: 'GET' as const, url: `/calls/${id}` },
      { method: 'POST' as const, url: `/calls/${id}/complete`, payload: { summary: 'forged', duration_seconds: 1 } },
      { method: 'GET' as const, url: '/calls/recent' },
      { method: 'GET' as const, url: '/webhooks' },
    ];
    for (const attempt of attempts) {
      for (const [name, headers, code] of [
        ['bare token', bare, 'OAUTH_CLIENT_MISSING'],
        ['wrong secret', wrongSecret, 'OAUTH_CLIENT_INVALID'],
      ] as const) {
        const res = await t.app.inject({ ...attempt, headers });
        assert.equal(res.statusCode, 401, `${attempt.method} ${attempt.url} with a ${name}`);
        assert.equal(res.json().code, code, `${attempt.method} ${attempt.url} with a ${name}`);
        assert.match(String(res.headers['www-authenticate']), /^Bearer .*error="invalid_token"/);
      }
    }
    const { rows } = await t.db.pool.query('SELECT status, count(*)::int AS n FROM calls WHERE organization_id = $1 GROUP BY status', [
      writer.member.org.id,
    ]);
    assert.deepEqual(rows, [{ status: 'in_progress', n: 1 }], 'nothing was created or completed');
  });

  test('an agent of the organization can be named', async () => {
    const member = await createMember(t.db.pool);
    const { rows } = await t.db.pool.query("INSERT INTO agents (organization_id, name) VALUES ($1, 'Ava') RETURNING id", [member.org.id]);
    const res = await t.app.inject({ method: 'POST', url: '/calls', headers: as(member.token), payload: { agent_id: rows[0].id } });
    assert.equal(res.statusCode, 201);
    assert.equal(res.json().agent_id, rows[0].id);
  });
});
