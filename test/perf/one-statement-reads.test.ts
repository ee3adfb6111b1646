// GET /calls/recent and GET /locations read the credential's principal and
// the data in one statement, with the JSON written by PostgreSQL (migration
// 0028). These tests
// hold that path to the same answers as the general one (services serialised
// by Node), to the same refusals, and to row-level security.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { hashToken } from '../../src/auth/tokens.ts';
import { recentCalls } from '../helpers/calls.ts';
import { readRecentCallsForToken } from '../../src/calls/calls.queries.ts';
import { listLocations } from '../../src/locations/locations.service.ts';
import type { TestApp } from '../helpers/app.ts';
import { completeCall, connectPlatform, startWebhookApp } from '../helpers/webhooks.ts';

describe('one-statement reads', () => {
  let t: TestApp;
  before(async () => {
    t = await startWebhookApp();
  });
  after(() => t.close());

  test('/calls/recent writes exactly what the Node path writes (timestamps to the millisecond, escapes, key order)', async () => {
    const org = await connectPlatform(t);
    const summaries = ['plain', 'quote " backslash \\ tab \t newline \n', 'ünïcödé ☎ 😀', '\u0001 control'];
    for (const summary of summaries) await completeCall(t, org.member, { summary, duration_seconds: 7 });
    // Microseconds that toISOString truncates, and a date whose milliseconds are 0.
    await t.db.pool.query(
      `UPDATE calls SET created_at = created_at + make_interval(secs => 0.000999) WHERE organization_id = $1 AND summary = 'plain'`,
      [org.member.org.id],
    );
    await t.db.pool.query(`UPDATE calls SET created_at = '2026-01-02T03:04:05Z' WHERE organization_id = $1 AND summary LIKE 'ünï%'`, [
      org.member.org.id,
    ]);
    const res = await t.app.inject({ url: '/calls/recent', headers: org.headers });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'no-store');
    const expected = await recentCalls(t.db.pool, org.member.org.id, 10);
    assert.equal(res.body, JSON.stringify(expected));
    assert.ok(res.json().some((c: { created_at: string }) => c.created_at === '2026-01-02T03:04:05.000Z'));
  });

  test('/locations writes exactly what the Node path writes', async () => {
    const org = await connectPlatform(t);
    const headers = { 'x-user-token': org.member.token };
    const bodies = [
      {
        name: 'Head office',
        address_line1: '1 Main St',
        city: 'Springfield',
        country: 'US',
        latitude: 39.7817,
        longitude: -89.6501,
        is_primary: true,
      },
      { name: 'b "quoted" ☎', address_line2: 'Unit 2', latitude: -0.000001, longitude: 179.999999 },
      { name: 'A first by name' },
    ];
    for (const payload of bodies)
      assert.equal((await t.app.inject({ method: 'POST', url: '/locations', headers, payload })).statusCode, 201);
    const res = await t.app.inject({ url: '/locations', headers });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    const expected = await listLocations(t.db.pool, org.member.org.id);
    assert.deepEqual(res.json(), JSON.parse(JSON.stringify(expected)));
    assert.deepEqual(Object.keys(res.json()[0]), Object.keys(expected[0]!));
    assert.deepEqual(
      res.json().map((l: { name: string }) => l.name),
      ['Head office', 'A first by name', 'b "quoted" ☎'],
    );
    const empty = await connectPlatform(t);
    assert.equal((await t.app.inject({ url: '/locations', headers: { 'x-user-token': empty.member.token } })).body, '[]');
  });

  test('revocation, deactivation and secret rotation are refused on the very next request', async () => {
    const org = await connectPlatform(t);
    const get = () => t.app.inject({ url: '/calls/recent', headers: org.headers });
    assert.equal((await get()).statusCode, 200);
    await t.db.pool.query(`UPDATE users SET active = false WHERE id = $1`, [org.member.user.id]);
    assert.equal((await get()).json().code, 'OAUTH_TOKEN_INVALID');
    assert.equal(
      (await t.app.inject({ url: '/locations', headers: { 'x-user-token': org.member.token } })).json().code,
      'AUTH_TOKEN_INVALID',
    );
    await t.db.pool.query(`UPDATE users SET active = true WHERE id = $1`, [org.member.user.id]);
    assert.equal((await get()).statusCode, 200);
    await t.db.pool.query(`UPDATE oauth_clients SET secret_hash = $2 WHERE client_id = $1`, [
      org.client.client_id,
      hashToken('sbs_rotated'),
    ]);
    assert.equal((await get()).json().code, 'OAUTH_CLIENT_INVALID');
    await t.db.pool.query(`UPDATE oauth_clients SET secret_hash = $2 WHERE client_id = $1`, [
      org.client.client_id,
      hashToken(org.client.client_secret),
    ]);
    assert.equal((await get()).statusCode, 200);
    await t.db.pool.query(
      `UPDATE oauth_grants g SET revoked_at = now() FROM oauth_access_tokens a WHERE a.grant_id = g.id AND a.token_hash = $1`,
      [hashToken(org.accessToken)],
    );
    assert.equal((await get()).json().code, 'OAUTH_TOKEN_INVALID');
  });

  test('the read runs under row-level security, and neither role nor organization outlives the statement', async () => {
    const org = await connectPlatform(t);
    await completeCall(t, org.member, { summary: 'mine' });
    const client = new pg.Client({ connectionString: t.db.url });
    await client.connect();
    try {
      // With the organization forced to another one, the policy hides every row: the statement reads as switchboard_app.
      await client.query(`CREATE FUNCTION pg_temp.noop() RETURNS void LANGUAGE sql AS 'SELECT 1'`);
      const result = await readRecentCallsForToken(client, hashToken(org.accessToken), { limit: 10, filters: {}, baseUrl: '' });
      assert.ok(result);
      assert.equal(result.organization_id, org.member.org.id);
      assert.equal(JSON.parse(result.body).length, 1);
      const after_ = await client.query(`SELECT current_user AS role, current_setting('app.organization_id', true) AS org`);
      assert.notEqual(after_.rows[0].role, 'switchboard_app');
      assert.ok(!after_.rows[0].org, 'the organization setting ends with the statement');
      assert.equal(
        await readRecentCallsForToken(client, hashToken('sba_unknown'), { limit: 10, filters: {}, baseUrl: '' }),
        undefined,
        'no active token, no row',
      );
    } finally {
      await client.end();
    }
  });
});
