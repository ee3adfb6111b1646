import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createUser } from '../../src/organizations/organizations.service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember, createOrg, PASSWORD } from '../helpers/fixtures.ts';
import { authorizationPath, createClient, obtainCode, tokenRequest, type TestClient } from '../helpers/oauth.ts';
import { hiddenInputs, UserAgent } from '../helpers/user-agent.ts';

describe('login and consent pages: CSRF, cookies, framing, organization picker', () => {
  let t: TestApp;
  let client: TestClient;
  before(async () => {
    t = await startTestApp({ listen: true });
    client = await createClient(t.db.pool, { name: 'Picker Platform', redirectUris: ['https://platform.example/cb'] });
  });
  after(() => t.close());

  const params = () => ({ response_type: 'code', client_id: client.client_id, state: 'st' });

  async function signedInAgent(email: string) {
    const agent = new UserAgent(t.url);
    const login = await agent.get('/login');
    const signedIn = await agent.post('/login', { ...hiddenInputs(login.body, '/login'), email, password: PASSWORD });
    assert.equal(signedIn.status, 303);
    return agent;
  }

  test('the session cookie is HttpOnly and SameSite=Lax, and the same kind of token as x-user-token', async () => {
    const member = await createMember(t.db.pool);
    const agent = new UserAgent(t.url);
    const login = await agent.get('/login');
    const res = await agent.post('/login', { ...hiddenInputs(login.body, '/login'), email: member.email, password: PASSWORD });
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('sb_session='))!;
    assert.match(cookie, /; HttpOnly/);
    assert.match(cookie, /; SameSite=Lax/);
    assert.doesNotMatch(cookie, /; Secure/, 'BASE_URL is http here');
    const token = agent.cookies.get('sb_session')!;
    const session = await t.app.inject({ url: '/auth/session', headers: { 'x-user-token': token } });
    assert.equal(session.statusCode, 200);
    assert.equal(session.json().user.email, member.email);
  });

  test('pages forbid framing and scripts', async () => {
    const member = await createMember(t.db.pool);
    const agent = await signedInAgent(member.email);
    const consent = await agent.get(authorizationPath(params()));
    assert.equal(consent.status, 200);
    for (const page of [consent, await new UserAgent(t.url).get('/login')]) {
      const csp = page.headers.get('content-security-policy') ?? '';
      assert.match(csp, /frame-ancestors 'none'/);
      assert.match(csp, /default-src 'none'/);
      assert.equal(page.headers.get('x-frame-options'), 'DENY');
      assert.equal(page.headers.get('cache-control'), 'no-store');
    }
    assert.match(consent.headers.get('content-security-policy')!, /form-action 'self' https:\/\/platform\.example/);
  });

  test("the consent form without the CSRF token, or with another browser's, issues no code", async () => {
    const member = await createMember(t.db.pool);
    const agent = await signedInAgent(member.email);
    const consent = await agent.get(authorizationPath(params()));
    const fields = hiddenInputs(consent.body, '/oauth/authorize');
    const { csrf: _omit, ...withoutCsrf } = fields;
    const missing = await agent.post('/oauth/authorize', { ...withoutCsrf, decision: 'allow' });
    assert.equal(missing.status, 403);
    assert.equal(missing.location, undefined);

    const other = await signedInAgent((await createMember(t.db.pool)).email);
    const otherConsent = hiddenInputs((await other.get(authorizationPath(params()))).body, '/oauth/authorize');
    const foreign = await agent.post('/oauth/authorize', { ...fields, csrf: otherConsent.csrf!, decision: 'allow' });
    assert.equal(foreign.status, 403);
    const { rows } = await t.db.pool.query('SELECT count(*)::int AS n FROM oauth_grants WHERE user_id = $1', [member.user.id]);
    assert.equal(rows[0].n, 0);
  });

  test('the login form needs its CSRF token too', async () => {
    const member = await createMember(t.db.pool);
    const agent = new UserAgent(t.url);
    await agent.get('/login');
    const res = await agent.post('/login', { email: member.email, password: PASSWORD, return_to: '/connected-apps' });
    assert.equal(res.status, 403);
    assert.equal(agent.cookies.has('sb_session'), false);
  });

  test('a tampered consent form is checked again: a scope beyond the client is refused', async () => {
    const member = await createMember(t.db.pool);
    const narrow = await createClient(t.db.pool, { redirectUris: ['https://narrow.example/cb'], scopes: ['calls:read'] });
    const agent = await signedInAgent(member.email);
    const consent = await agent.get(authorizationPath({ response_type: 'code', client_id: narrow.client_id, state: 's' }));
    const fields = hiddenInputs(consent.body, '/oauth/authorize');
    const res = await agent.post('/oauth/authorize', { ...fields, scope: 'calls:read calls:write', decision: 'allow' });
    assert.equal(res.status, 303);
    const location = new URL(res.location!);
    assert.equal(location.searchParams.get('error'), 'invalid_scope');
    assert.equal(location.searchParams.get('code'), null);
  });

  test('a user of several organizations picks one on the consent page; the token acts in it', async () => {
    const member = await createMember(t.db.pool);
    const second = await createOrg(t.db.pool, 'Second Org');
    await createUser(t.db.pool, { email: member.email, password: PASSWORD, organizationId: second.id, role: 'member' });
    const agent = await signedInAgent(member.email);
    const consent = await agent.get(authorizationPath(params()));
    assert.match(consent.body, /<select id="organization_id" name="organization_id">/);
    assert.match(consent.body, /Second Org/);

    const { code } = await obtainCode(t.url, { client, member, organizationId: second.id, pkce: false });
    const tokens = await tokenRequest(t.app, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: client.redirect_uris[0]!,
      client_id: client.client_id,
      client_secret: client.client_secret,
    });
    assert.equal(tokens.statusCode, 200);
    const userinfo = await t.app.inject({ url: '/oauth/userinfo', headers: { authorization: `Bearer ${tokens.json().access_token}` } });
    assert.equal(userinfo.json().organization.id, second.id);
  });

  test('choosing an organization the user is not a member of is refused', async () => {
    const member = await createMember(t.db.pool);
    const foreign = await createOrg(t.db.pool, 'Foreign');
    const agent = await signedInAgent(member.email);
    const fields = hiddenInputs((await agent.get(authorizationPath(params()))).body, '/oauth/authorize');
    const res = await agent.post('/oauth/authorize', { ...fields, organization_id: foreign.id, decision: 'allow' });
    assert.equal(res.status, 403);
    assert.equal(res.location, undefined);
  });

  test('login only returns to paths on this site', async () => {
    const member = await createMember(t.db.pool);
    for (const target of ['https://evil.example/', '//evil.example/x', '/\\evil.example']) {
      const agent = new UserAgent(t.url);
      const login = await agent.get(`/login?${new URLSearchParams({ return_to: target })}`);
      const fields = hiddenInputs(login.body, '/login');
      const res = await agent.post('/login', { ...fields, email: member.email, password: PASSWORD });
      assert.equal(res.location, '/', target);
    }
  });

  test('a return_to with characters outside ASCII is percent-encoded, not a 500 after signing in', async () => {
    const member = await createMember(t.db.pool);
    const cases: [string, string][] = [
      ['/ui/locations?q=ā', '/ui/locations?q=%C4%81'],
      ['/x\u2028y', '/x%E2%80%A8y'],
      ['/a b', '/a%20b'],
    ];
    for (const [target, expected] of cases) {
      const agent = new UserAgent(t.url);
      const login = await agent.get(`/login?${new URLSearchParams({ return_to: target })}`);
      assert.equal(login.status, 200, target);
      const res = await agent.post('/login', { ...hiddenInputs(login.body, '/login'), email: member.email, password: PASSWORD });
      assert.equal(res.status, 303, target);
      assert.equal(res.location, expected, target);
      const again = await agent.get(`/login?${new URLSearchParams({ return_to: target })}`);
      assert.equal(again.status, 302, target);
      assert.equal(again.location, expected, target);
    }
  });

  test('a wrong password re-renders the login page with 401 and sets no session', async () => {
    const member = await createMember(t.db.pool);
    const agent = new UserAgent(t.url);
    const login = await agent.get('/login');
    const res = await agent.post('/login', { ...hiddenInputs(login.body, '/login'), email: member.email, password: 'wrong password' });
    assert.equal(res.status, 401);
    assert.match(res.body, /Email or password is incorrect/);
    assert.equal(agent.cookies.has('sb_session'), false);
  });
});

describe('session cookie on an https deployment', () => {
  test('is Secure, and __Host- prefixed (no subdomain can plant it), when BASE_URL is https', async () => {
    const t = await startTestApp({ env: { BASE_URL: 'https://switchboard.example' } });
    try {
      const member = await createMember(t.db.pool);
      const login = await t.app.inject({ url: '/login' });
      const csrfCookie = login.cookies.find((c) => c.name === '__Host-sb_csrf')!;
      assert.equal(csrfCookie.secure, true);
      assert.equal(csrfCookie.path, '/');
      assert.equal(csrfCookie.domain, undefined);
      const fields = hiddenInputs(login.body, '/login');
      const res = await t.app.inject({
        method: 'POST',
        url: '/login',
        cookies: { '__Host-sb_csrf': csrfCookie.value },
        payload: new URLSearchParams({ ...fields, email: member.email, password: PASSWORD }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      assert.equal(res.statusCode, 303);
      const session = res.cookies.find((c) => c.name === '__Host-sb_session')!;
      assert.equal(session.secure, true);
      assert.equal(session.path, '/');
      const home = await t.app.inject({ url: '/', cookies: { '__Host-sb_session': session.value } });
      assert.equal(home.statusCode, 200, 'the prefixed cookie signs the browser in (the dashboard, not the login redirect)');
      assert.equal(session.httpOnly, true);
      assert.equal(session.sameSite, 'Lax');
    } finally {
      await t.close();
    }
  });
});
