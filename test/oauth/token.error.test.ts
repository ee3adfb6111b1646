import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember } from '../helpers/fixtures.ts';
import { createClient, obtainCode, pkcePair, tokenRequest, type TestClient } from '../helpers/oauth.ts';

// POST /oauth/token: client authentication, request shape and the
// authorization_code rules, each answered in RFC 6749 §5.2 form.
describe('POST /oauth/token: errors', () => {
  let t: TestApp;
  let client: TestClient;
  let other: TestClient;
  before(async () => {
    t = await startTestApp({ listen: true });
    client = await createClient(t.db.pool, { redirectUris: ['https://platform.example/cb'] });
    other = await createClient(t.db.pool, { redirectUris: ['https://other.example/cb'] });
  });
  after(() => t.close());

  const creds = () => ({ client_id: client.client_id, client_secret: client.client_secret });

  async function freshCode(options: { pkce?: boolean } = {}) {
    const member = await createMember(t.db.pool);
    return { member, ...(await obtainCode(t.url, { client, member, ...options })) };
  }

  function assertOAuthError(res: Awaited<ReturnType<typeof tokenRequest>>, status: number, error: string, description?: RegExp) {
    assert.equal(res.statusCode, status, res.body);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.equal(res.json().error, error);
    if (description) assert.match(res.json().error_description, description);
    assert.match(res.json().error_description, /^[\x20-\x21\x23-\x5B\x5D-\x7E]+$/, 'RFC 6749 §5.2 character set');
    assert.equal(res.headers['cache-control'], 'no-store');
  }

  test('a wrong secret: 401 invalid_client with WWW-Authenticate, for post and Basic alike', async () => {
    const { code } = await freshCode({ pkce: false });
    const post = await tokenRequest(t.app, {
      grant_type: 'authorization_code',
      code,
      client_id: client.client_id,
      client_secret: 'sbs_wrong',
    });
    assertOAuthError(post, 401, 'invalid_client');
    assert.match(String(post.headers['www-authenticate']), /^Basic realm="switchboard"/);
    const basic = await tokenRequest(
      t.app,
      { grant_type: 'authorization_code', code },
      { basic: { client_id: client.client_id, client_secret: 'sbs_wrong' } },
    );
    assertOAuthError(basic, 401, 'invalid_client');
    assert.match(String(basic.headers['www-authenticate']), /^Basic /);
  });

  test('an unknown client or no client authentication at all: 401 invalid_client', async () => {
    assertOAuthError(
      await tokenRequest(t.app, { grant_type: 'refresh_token', refresh_token: 'x', client_id: 'nope', client_secret: 'nope' }),
      401,
      'invalid_client',
    );
    assertOAuthError(
      await tokenRequest(t.app, { grant_type: 'refresh_token', refresh_token: 'x' }),
      401,
      'invalid_client',
      /client authentication is required/,
    );
  });

  test('Basic with a contradicting client_secret in the body: invalid_request', async () => {
    const res = await tokenRequest(
      t.app,
      { grant_type: 'refresh_token', refresh_token: 'x', client_secret: 'sbs_something-else' },
      { basic: creds() },
    );
    assertOAuthError(res, 400, 'invalid_request', /RFC 6749 section 2.3/);
  });

  test('Basic with the same credentials repeated in the body is authenticated (some client libraries send both)', async () => {
    const res = await tokenRequest(t.app, { grant_type: 'refresh_token', refresh_token: 'x', ...creds() }, { basic: creds() });
    assertOAuthError(res, 400, 'invalid_grant');
  });

  test('an Authorization header that is not Basic is ignored: the body credentials decide (RFC 6749 section 2.3.1)', async () => {
    const form = (extra: Record<string, string>) =>
      t.app.inject({
        method: 'POST',
        url: '/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: 'Bearer sbat_some_old_access_token' },
        payload: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'sbr_unknown', ...extra }).toString(),
      });
    // Authenticated by the body: the refresh token itself is what is refused.
    assertOAuthError(await form(creds()), 400, 'invalid_grant', /unknown/);
    assertOAuthError(await form({ client_id: client.client_id, client_secret: 'sbs_wrong' }), 401, 'invalid_client', /wrong secret/);
    assertOAuthError(await form({}), 401, 'invalid_client', /client authentication is required/);
    // A Basic header that does not decode is still refused, not ignored.
    const broken = await t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: 'Basic !!!' },
      payload: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'sbr_unknown', ...creds() }).toString(),
    });
    assertOAuthError(broken, 401, 'invalid_client', /not valid HTTP Basic/);
  });

  test('an unsupported or missing grant_type', async () => {
    assertOAuthError(
      await tokenRequest(t.app, { grant_type: 'password', username: 'a', password: 'b', ...creds() }),
      400,
      'unsupported_grant_type',
    );
    assertOAuthError(await tokenRequest(t.app, { grant_type: 'client_credentials', ...creds() }), 400, 'unsupported_grant_type');
    assertOAuthError(await tokenRequest(t.app, { ...creds() }), 400, 'invalid_request', /grant_type is required/);
  });

  test('a repeated parameter: invalid_request', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `grant_type=authorization_code&code=a&code=b&client_id=${client.client_id}&client_secret=${client.client_secret}`,
    });
    assertOAuthError(res, 400, 'invalid_request', /more than once: code/);
  });

  test('a form body with a charset parameter is understood', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' },
      payload: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'sbr_unknown', ...creds() }).toString(),
    });
    assertOAuthError(res, 400, 'invalid_grant', /unknown/);
  });

  test('an unsupported content type or a malformed JSON body: invalid_request', async () => {
    const xml = await t.app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': 'text/xml' }, payload: '<x/>' });
    assertOAuthError(xml, 400, 'invalid_request');
    const json = await t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/json' },
      payload: '{"grant_type":',
    });
    assertOAuthError(json, 400, 'invalid_request');
    const array = await t.app.inject({ method: 'POST', url: '/oauth/token', payload: [1, 2] });
    assertOAuthError(array, 400, 'invalid_request');
  });

  test('missing code, unknown code', async () => {
    assertOAuthError(
      await tokenRequest(t.app, { grant_type: 'authorization_code', ...creds() }),
      400,
      'invalid_request',
      /code is required/,
    );
    assertOAuthError(
      await tokenRequest(t.app, { grant_type: 'authorization_code', code: 'sbc_unknown', ...creds() }),
      400,
      'invalid_grant',
      /unknown/,
    );
  });

  test('an expired code: invalid_grant', async () => {
    const { member, code, verifier } = await freshCode();
    await t.db.pool.query(
      `UPDATE oauth_authorization_codes SET expires_at = now() - interval '1 second' WHERE grant_id IN (SELECT id FROM oauth_grants WHERE user_id = $1)`,
      [member.user.id],
    );
    const res = await tokenRequest(t.app, {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier!,
      redirect_uri: client.redirect_uris[0]!,
      ...creds(),
    });
    assertOAuthError(res, 400, 'invalid_grant', /expired \(RFC 6749 section 4.1.2\)/);
  });

  test('a code used twice: invalid_grant, and the tokens issued from it are revoked', async () => {
    const { code, verifier } = await freshCode();
    const form = { grant_type: 'authorization_code', code, code_verifier: verifier!, redirect_uri: client.redirect_uris[0]!, ...creds() };
    const first = await tokenRequest(t.app, form);
    assert.equal(first.statusCode, 200);
    const { access_token, refresh_token } = first.json();
    const bearer = { authorization: `Bearer ${access_token}` };
    assert.equal((await t.app.inject({ url: '/oauth/userinfo', headers: bearer })).statusCode, 200);

    assertOAuthError(await tokenRequest(t.app, form), 400, 'invalid_grant', /already been used/);
    assert.equal((await t.app.inject({ url: '/oauth/userinfo', headers: bearer })).statusCode, 401);
    assertOAuthError(
      await tokenRequest(t.app, { grant_type: 'refresh_token', refresh_token, ...creds() }),
      400,
      'invalid_grant',
      /revoked/,
    );
  });

  test('a code issued to another client: invalid_grant', async () => {
    const { code } = await freshCode({ pkce: false });
    const res = await tokenRequest(t.app, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: client.redirect_uris[0]!,
      client_id: other.client_id,
      client_secret: other.client_secret,
    });
    assertOAuthError(res, 400, 'invalid_grant', /another client/);
  });

  test('redirect_uri: required when the authorization request had it, and identical', async () => {
    const { code } = await freshCode({ pkce: false });
    assertOAuthError(
      await tokenRequest(t.app, { grant_type: 'authorization_code', code, ...creds() }),
      400,
      'invalid_grant',
      /redirect_uri is required/,
    );
    assertOAuthError(
      await tokenRequest(t.app, { grant_type: 'authorization_code', code, redirect_uri: 'https://platform.example/cb/', ...creds() }),
      400,
      'invalid_grant',
      /redirect_uri mismatch/,
    );
    assert.equal(
      (await tokenRequest(t.app, { grant_type: 'authorization_code', code, redirect_uri: client.redirect_uris[0]!, ...creds() }))
        .statusCode,
      200,
    );
  });

  test('redirect_uri may be left out of the token request when the authorization request left it out', async () => {
    const member = await createMember(t.db.pool);
    const { code } = await obtainCode(t.url, { client, member, pkce: false, params: { redirect_uri: '' } });
    assert.equal((await tokenRequest(t.app, { grant_type: 'authorization_code', code, ...creds() })).statusCode, 200);
  });

  test('PKCE: a wrong verifier and a missing verifier are invalid_grant', async () => {
    const { code, verifier } = await freshCode();
    const form = { grant_type: 'authorization_code', code, redirect_uri: client.redirect_uris[0]!, ...creds() };
    assertOAuthError(
      await tokenRequest(t.app, { ...form, code_verifier: pkcePair().verifier }),
      400,
      'invalid_grant',
      /RFC 7636 section 4.6/,
    );
    assertOAuthError(await tokenRequest(t.app, form), 400, 'invalid_grant', /code_verifier is required/);
    assert.equal(
      (await tokenRequest(t.app, { ...form, code_verifier: verifier! })).statusCode,
      200,
      'failed attempts do not burn the code',
    );
  });

  test('PKCE downgrade: a verifier for a code issued without a challenge is refused', async () => {
    const { code } = await freshCode({ pkce: false });
    const res = await tokenRequest(t.app, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: client.redirect_uris[0]!,
      code_verifier: 'a'.repeat(43),
      ...creds(),
    });
    assertOAuthError(res, 400, 'invalid_grant', /downgrade/);
  });

  test('the token endpoint is rate limited per client and address: half the address budget each, then 429', async () => {
    // TOKEN_RATE_LIMIT (600 a minute by default) is per address; each client gets half of it at one address.
    const perClient = Math.floor(t.config.tokenRateLimit.max / 2);
    const attempt = (as: TestClient, remoteAddress: string) =>
      tokenRequest(
        t.app,
        { grant_type: 'refresh_token', refresh_token: 'x', client_id: as.client_id, client_secret: 'wrong' },
        { remoteAddress },
      );
    const statuses: number[] = [];
    for (let i = 0; i < perClient; i++) statuses.push((await attempt(other, '10.1.2.3')).statusCode);
    assert.deepEqual(
      statuses.filter((status) => status !== 401),
      [],
      `each of the first ${perClient} requests is answered (a wrong secret: 401)`,
    );
    const limited = await attempt(other, '10.1.2.3');
    assert.equal(limited.statusCode, 429, limited.body);
    assert.equal(limited.json().error, 'temporarily_unavailable');
    assert.ok(Number(limited.headers['retry-after']) > 0);
    assert.equal((await attempt(other, '10.1.2.4')).statusCode, 401, 'another address keeps its own budget');
    assert.equal((await attempt(client, '10.1.2.3')).statusCode, 401, 'another client at the same address keeps its own half');
  });
});
