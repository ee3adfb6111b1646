import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setOrganizationActive } from '../../src/organizations/organizations.queries.ts';
import { setUserActiveByEmail } from '../../src/organizations/users.queries.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember } from '../helpers/fixtures.ts';
import { createClient, obtainCode, tokenRequest, type TestClient } from '../helpers/oauth.ts';

// grant_type=refresh_token: rotation, the reuse grace period, family
// revocation, client binding and scope narrowing.
describe('POST /oauth/token: refresh_token grant', () => {
  let t: TestApp;
  let client: TestClient;
  let other: TestClient;
  before(async () => {
    t = await startTestApp({ listen: true });
    client = await createClient(t.db.pool, {
      redirectUris: ['https://platform.example/cb'],
      scopes: ['calls:read', 'contacts:read', 'leads:read'],
    });
    other = await createClient(t.db.pool, { redirectUris: ['https://other.example/cb'] });
  });
  after(() => t.close());

  const creds = () => ({ client_id: client.client_id, client_secret: client.client_secret });
  const refresh = (refreshToken: string, extra: Record<string, string> = {}) =>
    tokenRequest(t.app, { grant_type: 'refresh_token', refresh_token: refreshToken, ...creds(), ...extra });
  const userinfo = (accessToken: string) => t.app.inject({ url: '/oauth/userinfo', headers: { authorization: `Bearer ${accessToken}` } });

  async function connect(scope = 'calls:read contacts:read') {
    const member = await createMember(t.db.pool);
    const { code, verifier } = await obtainCode(t.url, { client, member, params: { scope } });
    const res = await tokenRequest(t.app, {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier!,
      redirect_uri: client.redirect_uris[0]!,
      ...creds(),
    });
    assert.equal(res.statusCode, 200);
    return { member, tokens: res.json() as { access_token: string; refresh_token: string; scope: string } };
  }

  test('refresh rotates the refresh token and answers with no-store', async () => {
    const { tokens } = await connect();
    const res = await refresh(tokens.refresh_token);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
    const next = res.json();
    assert.deepEqual(Object.keys(next).sort(), ['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
    assert.equal(next.token_type, 'Bearer');
    assert.notEqual(next.refresh_token, tokens.refresh_token);
    assert.equal((await userinfo(next.access_token)).statusCode, 200);
  });

  test('within REFRESH_REUSE_GRACE the previous refresh token still works (a retried lost response)', async () => {
    const { tokens } = await connect();
    const first = await refresh(tokens.refresh_token);
    assert.equal(first.statusCode, 200);
    const retry = await refresh(tokens.refresh_token);
    assert.equal(retry.statusCode, 200);
    assert.equal((await userinfo(first.json().access_token)).statusCode, 200, 'the family is intact');
  });

  test('after the grace period, reusing the previous refresh token revokes the whole grant', async () => {
    const { member, tokens } = await connect();
    const rotated = (await refresh(tokens.refresh_token)).json();
    await t.db.pool.query(
      `UPDATE oauth_refresh_tokens SET rotated_at = now() - make_interval(secs => $1 + 1)
        WHERE rotated_at IS NOT NULL AND grant_id IN (SELECT id FROM oauth_grants WHERE user_id = $2)`,
      [t.config.refreshReuseGrace, member.user.id],
    );
    const late = await refresh(tokens.refresh_token);
    assert.equal(late.statusCode, 400);
    assert.equal(late.json().error, 'invalid_grant');
    assert.match(late.json().error_description, /RFC 9700 section 4.14.2/);
    assert.equal((await userinfo(rotated.access_token)).statusCode, 401, 'access tokens of the family are revoked');
    assert.equal((await userinfo(tokens.access_token)).statusCode, 401);
    assert.equal((await refresh(rotated.refresh_token)).json().error, 'invalid_grant', 'so is the newest refresh token');
  });

  test('a refresh token presented by another client is refused, and stays usable by its own', async () => {
    const { tokens } = await connect();
    const stolen = await tokenRequest(t.app, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: other.client_id,
      client_secret: other.client_secret,
    });
    assert.equal(stolen.statusCode, 400);
    assert.equal(stolen.json().error, 'invalid_grant');
    assert.match(stolen.json().error_description, /another client/);
    assert.equal((await refresh(tokens.refresh_token)).statusCode, 200);
  });

  test('scope may be narrowed, never widened; the refresh token keeps the granted scope', async () => {
    const { tokens } = await connect('calls:read contacts:read');
    const wider = await refresh(tokens.refresh_token, { scope: 'calls:read leads:read' });
    assert.equal(wider.statusCode, 400);
    assert.equal(wider.json().error, 'invalid_scope');
    const narrowed = await refresh(tokens.refresh_token, { scope: 'calls:read' });
    assert.equal(narrowed.statusCode, 200);
    assert.equal(narrowed.json().scope, 'calls:read');
    const again = await refresh(narrowed.json().refresh_token, { scope: 'contacts:read calls:read' });
    assert.equal(again.statusCode, 200, 'the rotated refresh token still carries the original scope');
    assert.equal(again.json().scope, 'calls:read contacts:read');
  });

  test('an expired refresh token: invalid_grant', async () => {
    const { member, tokens } = await connect();
    await t.db.pool.query(
      `UPDATE oauth_refresh_tokens SET expires_at = now() - interval '1 second' WHERE grant_id IN (SELECT id FROM oauth_grants WHERE user_id = $1)`,
      [member.user.id],
    );
    const res = await refresh(tokens.refresh_token);
    assert.equal(res.json().error, 'invalid_grant');
    assert.match(res.json().error_description, /expired/);
  });

  test('a deactivated user or organization can neither refresh nor use its tokens', async () => {
    const a = await connect();
    await setUserActiveByEmail(t.db.pool, a.member.email, false);
    assert.equal((await userinfo(a.tokens.access_token)).statusCode, 401);
    assert.equal((await refresh(a.tokens.refresh_token)).json().error, 'invalid_grant');

    const b = await connect();
    await setOrganizationActive(t.db.pool, b.member.org.id, false);
    assert.equal((await userinfo(b.tokens.access_token)).statusCode, 401);
    assert.equal((await refresh(b.tokens.refresh_token)).json().error, 'invalid_grant');
  });

  test('HTTP Basic and JSON bodies work as well as form posts', async () => {
    const { tokens } = await connect();
    const basic = await tokenRequest(t.app, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, { basic: creds() });
    assert.equal(basic.statusCode, 200);
    const json = await t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      payload: { grant_type: 'refresh_token', refresh_token: basic.json().refresh_token, ...creds() },
    });
    assert.equal(json.statusCode, 200);
    assert.equal(json.headers['cache-control'], 'no-store');
  });
});
