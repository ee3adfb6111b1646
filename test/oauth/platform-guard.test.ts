import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { requirePlatformToken } from '../../src/oauth/platform-guard.ts';
import { rotateClientSecret } from '../../src/oauth/clients.service.ts';
import { setOrganizationActive } from '../../src/organizations/organizations.queries.ts';
import { setUserActiveByEmail } from '../../src/organizations/users.queries.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember } from '../helpers/fixtures.ts';
import { createClient, issueTokens, platformHeaders, type TestClient } from '../helpers/oauth.ts';

// The guard is tested on a route of its own: the platform endpoints that use it
// (/calls/recent, /webhooks/subscribe) belong to the webhooks feature.
describe('platform guard: bearer token + x-client-id + x-client-secret', () => {
  let t: TestApp;
  let client: TestClient;
  before(async () => {
    t = await startTestApp({
      setup: (app) => app.get('/test/guarded', { preHandler: requirePlatformToken('calls:read') }, async (request) => request.principal),
    });
    client = await createClient(t.db.pool, { name: 'Guard Platform' });
  });
  after(() => t.close());

  async function connected(scopes = ['calls:read']) {
    const member = await createMember(t.db.pool);
    const tokens = await issueTokens(t.db.pool, { client, userId: member.user.id, organizationId: member.org.id, scopes });
    return { member, tokens, headers: platformHeaders(tokens, client) };
  }

  const call = (headers: Record<string, string>) => t.app.inject({ url: '/test/guarded', headers });

  function assertUnauthorized(res: Awaited<ReturnType<typeof call>>, code: string) {
    assert.equal(res.statusCode, 401);
    assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal(res.json().code, code);
    assert.match(String(res.headers['www-authenticate']), /^Bearer realm="switchboard"/);
  }

  test("all three headers right: the request runs as the token's user, organization and client", async () => {
    const { member, headers } = await connected(['calls:read', 'contacts:read']);
    const res = await call(headers);
    assert.equal(res.statusCode, 200);
    const { rows } = await t.db.pool.query('SELECT id FROM oauth_grants WHERE user_id = $1', [member.user.id]);
    assert.deepEqual(res.json(), {
      kind: 'oauth',
      userId: member.user.id,
      organizationId: member.org.id,
      scopes: ['calls:read', 'contacts:read'],
      clientId: client.client_id,
      grantId: rows[0].id,
    });
  });

  test('no Authorization header: 401 with a bare Bearer challenge', async () => {
    const { headers } = await connected();
    const { authorization: _omit, ...rest } = headers;
    const res = await call(rest);
    assertUnauthorized(res, 'OAUTH_TOKEN_MISSING');
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="switchboard"');
  });

  test('an Authorization header that is not a Bearer credential: 401 invalid_token', async () => {
    const { headers } = await connected();
    const res = await call({ ...headers, authorization: `Basic ${Buffer.from('a:b').toString('base64')}` });
    assertUnauthorized(res, 'OAUTH_TOKEN_MISSING');
    assert.match(String(res.headers['www-authenticate']), /error="invalid_token"/);
  });

  test('unknown bearer token: 401 invalid_token', async () => {
    const { headers } = await connected();
    const res = await call({ ...headers, authorization: 'Bearer sba_not-a-real-token' });
    assertUnauthorized(res, 'OAUTH_TOKEN_INVALID');
    assert.match(String(res.headers['www-authenticate']), /error="invalid_token"/);
    assert.equal(res.json().error, 'invalid_token');
  });

  for (const name of ['x-client-id', 'x-client-secret']) {
    test(`${name} missing: 401`, async () => {
      const { headers } = await connected();
      const { [name]: _omit, ...rest } = headers;
      assertUnauthorized(await call(rest), 'OAUTH_CLIENT_MISSING');
    });

    test(`${name} wrong: 401`, async () => {
      const { headers } = await connected();
      assertUnauthorized(await call({ ...headers, [name]: `${headers[name]}x` }), 'OAUTH_CLIENT_INVALID');
    });
  }

  test("a token of another client, sent with that other client's own credentials: 401", async () => {
    const { tokens } = await connected();
    const other = await createClient(t.db.pool, { name: 'Other Platform' });
    assertUnauthorized(await call(platformHeaders(tokens, other)), 'OAUTH_CLIENT_INVALID');
  });

  test('after rotate-secret the old secret is refused and the new one works', async () => {
    const own = await createClient(t.db.pool, { name: 'Rotating Platform' });
    const member = await createMember(t.db.pool);
    const tokens = await issueTokens(t.db.pool, { client: own, userId: member.user.id, organizationId: member.org.id });
    const rotated = (await rotateClientSecret(t.db.pool, own.client_id))!;
    assertUnauthorized(await call(platformHeaders(tokens, own)), 'OAUTH_CLIENT_INVALID');
    assert.equal((await call(platformHeaders(tokens, { client_id: own.client_id, client_secret: rotated.client_secret }))).statusCode, 200);
  });

  test('a token lacking the scope: 403 insufficient_scope', async () => {
    const { headers } = await connected(['contacts:read']);
    const res = await call(headers);
    assert.equal(res.statusCode, 403);
    assert.equal(res.json().code, 'OAUTH_INSUFFICIENT_SCOPE');
    assert.equal(res.json().error, 'insufficient_scope');
    assert.match(String(res.headers['www-authenticate']), /^Bearer realm="switchboard", error="insufficient_scope", .*scope="calls:read"/);
  });

  test('an expired token: 401', async () => {
    const { tokens, headers } = await connected();
    assert.equal((await call(headers)).statusCode, 200);
    await t.db.pool.query(`UPDATE oauth_access_tokens SET expires_at = now() - interval '1 second' WHERE grant_id = $1`, [tokens.grant_id]);
    assertUnauthorized(await call(headers), 'OAUTH_TOKEN_INVALID');
  });

  test('a revoked grant: 401 at once', async () => {
    const { tokens, headers } = await connected();
    assert.equal((await call(headers)).statusCode, 200);
    await t.db.pool.query(`UPDATE oauth_grants SET revoked_at = now() WHERE id = $1`, [tokens.grant_id]);
    assertUnauthorized(await call(headers), 'OAUTH_TOKEN_INVALID');
  });

  test('a deactivated user: 401 at once', async () => {
    const { member, headers } = await connected();
    assert.equal((await call(headers)).statusCode, 200);
    await setUserActiveByEmail(t.db.pool, member.email, false);
    assertUnauthorized(await call(headers), 'OAUTH_TOKEN_INVALID');
  });

  test('a deactivated organization: 401 at once', async () => {
    const { member, headers } = await connected();
    assert.equal((await call(headers)).statusCode, 200);
    await setOrganizationActive(t.db.pool, member.org.id, false);
    assertUnauthorized(await call(headers), 'OAUTH_TOKEN_INVALID');
  });

  test('a user removed from the organization: 401 at once', async () => {
    const { member, headers } = await connected();
    await t.db.pool.query('DELETE FROM memberships WHERE user_id = $1', [member.user.id]);
    assertUnauthorized(await call(headers), 'OAUTH_TOKEN_INVALID');
  });

  test('the hot path costs exactly one database query', async () => {
    const { headers } = await connected();
    const pool = t.app.db;
    const original = pool.query.bind(pool);
    let queries = 0;
    (pool as { query: unknown }).query = (...args: unknown[]) => {
      queries++;
      return (original as (...a: unknown[]) => unknown)(...args);
    };
    try {
      assert.equal((await call(headers)).statusCode, 200);
    } finally {
      (pool as { query: unknown }).query = original;
    }
    assert.equal(queries, 1);
  });
});
