import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember } from '../helpers/fixtures.ts';
import { createClient, issueTokens, type TestClient } from '../helpers/oauth.ts';

describe('GET|POST /oauth/userinfo', () => {
  let t: TestApp;
  let client: TestClient;
  before(async () => {
    t = await startTestApp();
    client = await createClient(t.db.pool);
  });
  after(() => t.close());

  test('any valid token (whatever its scope) gets the user and organization, by GET and POST', async () => {
    const member = await createMember(t.db.pool);
    const { access_token } = await issueTokens(t.db.pool, {
      client,
      userId: member.user.id,
      organizationId: member.org.id,
      scopes: ['leads:read'],
    });
    for (const method of ['GET', 'POST'] as const) {
      const res = await t.app.inject({ method, url: '/oauth/userinfo', headers: { authorization: `Bearer ${access_token}` } });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.deepEqual(res.json(), {
        sub: member.user.id,
        email: member.email,
        name: member.email,
        organization: { id: member.org.id, name: member.org.name },
      });
    }
  });

  test('no token: 401 with a bare Bearer challenge', async () => {
    const res = await t.app.inject({ url: '/oauth/userinfo' });
    assert.equal(res.statusCode, 401);
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="switchboard"');
    assert.equal(res.json().error, 'invalid_token');
  });

  test('an unknown or expired token: 401 invalid_token', async () => {
    const res = await t.app.inject({ url: '/oauth/userinfo', headers: { authorization: 'Bearer sba_unknown' } });
    assert.equal(res.statusCode, 401);
    assert.match(String(res.headers['www-authenticate']), /^Bearer realm="switchboard", error="invalid_token", error_description="/);

    const member = await createMember(t.db.pool);
    const issued = await issueTokens(t.db.pool, { client, userId: member.user.id, organizationId: member.org.id });
    await t.db.pool.query(`UPDATE oauth_access_tokens SET expires_at = now() WHERE grant_id = $1`, [issued.grant_id]);
    assert.equal(
      (await t.app.inject({ url: '/oauth/userinfo', headers: { authorization: `Bearer ${issued.access_token}` } })).statusCode,
      401,
    );
  });

  test('a user name, when set, is the name', async () => {
    const member = await createMember(t.db.pool);
    await t.db.pool.query(`UPDATE users SET name = 'Ada Lovelace' WHERE id = $1`, [member.user.id]);
    const { access_token } = await issueTokens(t.db.pool, { client, userId: member.user.id, organizationId: member.org.id });
    const res = await t.app.inject({ url: '/oauth/userinfo', headers: { authorization: `Bearer ${access_token}` } });
    assert.equal(res.json().name, 'Ada Lovelace');
  });
});
