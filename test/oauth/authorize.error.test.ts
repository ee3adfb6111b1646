import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember, PASSWORD } from '../helpers/fixtures.ts';
import { authorizationPath, createClient, pkcePair, type TestClient } from '../helpers/oauth.ts';
import { authorize, UserAgent } from '../helpers/user-agent.ts';

// Which failures of GET /oauth/authorize are an error page and which are
// redirected to the client (RFC 6749 §4.1.2.1), and what a redirect carries.
describe('GET /oauth/authorize: error page or redirect', () => {
  let t: TestApp;
  let client: TestClient;
  let twoUris: TestClient;
  const redirectUri = 'https://platform.example/cb';

  before(async () => {
    t = await startTestApp();
    client = await createClient(t.db.pool, { redirectUris: [redirectUri], scopes: ['calls:read', 'contacts:read'] });
    twoUris = await createClient(t.db.pool, { redirectUris: ['https://a.example/cb', 'https://b.example/cb'] });
  });
  after(() => t.close());

  const get = (params: Record<string, string>) => t.app.inject({ url: authorizationPath(params) });
  const base = () => ({ response_type: 'code', client_id: client.client_id, redirect_uri: redirectUri, state: 'xyz-state' });

  function assertErrorPage(res: Awaited<ReturnType<typeof get>>, pattern: RegExp) {
    assert.equal(res.statusCode, 400);
    assert.equal(res.headers.location, undefined, 'never a redirect');
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.match(res.body, pattern);
  }

  function assertRedirectError(res: Awaited<ReturnType<typeof get>>, error: string, description: RegExp) {
    assert.equal(res.statusCode, 302);
    const location = new URL(String(res.headers.location));
    assert.equal(`${location.origin}${location.pathname}`, redirectUri);
    assert.equal(location.searchParams.get('error'), error);
    assert.match(location.searchParams.get('error_description') ?? '', description);
    assert.match(
      location.searchParams.get('error_description') ?? '',
      /^[\x20-\x21\x23-\x5B\x5D-\x7E]+$/,
      'RFC 6749 §4.1.2.1 character set',
    );
    assert.equal(location.searchParams.get('state'), 'xyz-state');
    assert.equal(location.searchParams.get('iss'), t.config.baseUrl);
  }

  test('unknown client: an error page, never a redirect', async () => {
    assertErrorPage(await get({ ...base(), client_id: 'f'.repeat(32) }), /registered client/);
  });

  test('missing client_id: an error page', async () => {
    const { client_id: _omit, ...rest } = base();
    assertErrorPage(await get(rest), /client_id is required/);
  });

  test('redirect URI must match exactly: near misses get an error page', async () => {
    for (const near of [
      `${redirectUri}/`,
      redirectUri.toUpperCase(),
      `${redirectUri}?x=1`,
      'https://platform.example/cb#',
      'https://evil.example/cb',
    ]) {
      assertErrorPage(await get({ ...base(), redirect_uri: near }), /exactly match/);
    }
  });

  test('redirect_uri may be omitted only when the client registered exactly one', async () => {
    const { redirect_uri: _omit, ...rest } = base();
    const omitted = await get({ ...rest, response_type: 'token' });
    assertRedirectError(omitted, 'unsupported_response_type', /RFC 6749 section 4.1.1/);
    assertErrorPage(await get({ response_type: 'code', client_id: twoUris.client_id }), /registered several/);
  });

  test('unsupported or missing response_type is redirected with error, state and iss', async () => {
    assertRedirectError(await get({ ...base(), response_type: 'token' }), 'unsupported_response_type', /response_type=code/);
    const { response_type: _omit, ...rest } = base();
    assertRedirectError(await get(rest), 'invalid_request', /response_type is required/);
  });

  test('unknown scope and scope not allowed for the client: invalid_scope', async () => {
    assertRedirectError(await get({ ...base(), scope: 'calls:read admin' }), 'invalid_scope', /unknown scope: admin/);
    assertRedirectError(await get({ ...base(), scope: 'leads:write' }), 'invalid_scope', /not allowed for this client: leads:write/);
  });

  test('PKCE: plain refused, challenge without method refused, method without challenge refused', async () => {
    const { challenge } = pkcePair();
    assertRedirectError(
      await get({ ...base(), code_challenge: challenge, code_challenge_method: 'plain' }),
      'invalid_request',
      /S256; plain is not supported/,
    );
    assertRedirectError(await get({ ...base(), code_challenge: challenge }), 'invalid_request', /plain default is not supported/);
    assertRedirectError(await get({ ...base(), code_challenge_method: 'S256' }), 'invalid_request', /without code_challenge/);
    assertRedirectError(
      await get({ ...base(), code_challenge: 'short', code_challenge_method: 'S256' }),
      'invalid_request',
      /43 base64url/,
    );
  });

  test('a repeated parameter is invalid_request (RFC 6749 §3.1)', async () => {
    const res = await t.app.inject({ url: `${authorizationPath(base())}&scope=calls:read&scope=contacts:read` });
    assertRedirectError(res, 'invalid_request', /more than once: scope/);
  });

  test('a repeated client_id or redirect_uri is an error page', async () => {
    assertErrorPage(
      await t.app.inject({ url: `${authorizationPath(base())}&client_id=${client.client_id}` }),
      /client_id must be given once/,
    );
    assertErrorPage(
      await t.app.inject({ url: `${authorizationPath(base())}&redirect_uri=${encodeURIComponent(redirectUri)}` }),
      /redirect_uri must be given once/,
    );
  });

  test('a valid request from someone not signed in goes to the login page, then back', async () => {
    const res = await get(base());
    assert.equal(res.statusCode, 302);
    const login = new URL(String(res.headers.location), 'http://x');
    assert.equal(login.pathname, '/login');
    assert.equal(login.searchParams.get('return_to'), authorizationPath(base()));
  });
});

describe('authorization responses over real HTTP', () => {
  let t: TestApp;
  let client: TestClient;
  before(async () => {
    t = await startTestApp({ listen: true });
    client = await createClient(t.db.pool, { redirectUris: ['https://platform.example/cb?tenant=42'] });
  });
  after(() => t.close());

  const params = (state: string) => ({ response_type: 'code', client_id: client.client_id, state });

  test('Allow: code, the exact state and iss; the registered query is kept', async () => {
    const member = await createMember(t.db.pool);
    const state = 'a state with spaces & symbols/?=';
    const location = new URL(
      await authorize(new UserAgent(t.url), authorizationPath(params(state)), { email: member.email, password: PASSWORD }),
    );
    assert.equal(location.origin + location.pathname, 'https://platform.example/cb');
    assert.equal(location.searchParams.get('tenant'), '42');
    assert.match(location.searchParams.get('code') ?? '', /^sbc_[\w-]{43}$/);
    assert.equal(location.searchParams.get('state'), state);
    assert.equal(location.searchParams.get('iss'), t.url);
  });

  test('Deny: access_denied with state and iss, and no code', async () => {
    const member = await createMember(t.db.pool);
    const location = new URL(
      await authorize(new UserAgent(t.url), authorizationPath(params('s-1')), {
        email: member.email,
        password: PASSWORD,
        decision: 'deny',
      }),
    );
    assert.equal(location.searchParams.get('error'), 'access_denied');
    assert.equal(location.searchParams.get('state'), 's-1');
    assert.equal(location.searchParams.get('iss'), t.url);
    assert.equal(location.searchParams.get('code'), null);
  });

  test('without state, the response carries no state but still iss', async () => {
    const member = await createMember(t.db.pool);
    const location = new URL(
      await authorize(new UserAgent(t.url), authorizationPath({ response_type: 'code', client_id: client.client_id }), {
        email: member.email,
        password: PASSWORD,
      }),
    );
    assert.equal(location.searchParams.has('state'), false);
    assert.equal(location.searchParams.get('iss'), t.url);
    assert.ok(location.searchParams.get('code'));
  });
});
