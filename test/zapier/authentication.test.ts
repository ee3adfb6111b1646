// @own-test-process: zapier-platform-core's tester replaces http.request and https.request for the whole process
// (create-http-patch.js), with a version that drops a third argument (url, options, callback).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember, PASSWORD, type Member } from '../helpers/fixtures.ts';
import { createClient, type TestClient } from '../helpers/oauth.ts';
import { App, authorizeAccount, invoke, useSwitchboard, ZAPIER_REDIRECT_URI } from '../helpers/zapier.ts';

const oauth2 = App.authentication.oauth2Config;

// The Zapier connection flow against a real Switchboard: the app renders the
// authorize URL, a user signs in and approves on the real consent page, and
// the app's own getAccessToken/refreshAccessToken/test run through
// zapier-platform-core against the real token and userinfo endpoints.
describe('Zapier app authentication against Switchboard', () => {
  let t: TestApp;
  let client: TestClient;
  let member: Member;

  before(async () => {
    t = await startTestApp({ listen: true });
    client = await createClient(t.db.pool, { name: 'Zapier', redirectUris: [ZAPIER_REDIRECT_URI] });
    member = await createMember(t.db.pool);
    useSwitchboard(t.url, client);
  });
  after(() => t.close());

  async function connect(options: { pkce: boolean }) {
    const { code, verifier, state, location } = await authorizeAccount(t.url, { email: member.email, password: PASSWORD }, options);
    assert.equal(`${location.origin}${location.pathname}`, ZAPIER_REDIRECT_URI);
    assert.equal(location.searchParams.get('state'), state);
    return { code, verifier };
  }

  function exchange(code: string, verifier?: string) {
    return invoke<{ access_token: string; refresh_token: string }>(oauth2.getAccessToken, {
      inputData: { code, redirect_uri: ZAPIER_REDIRECT_URI, ...(verifier ? { code_verifier: verifier } : {}) },
    });
  }

  test('the rendered authorize URL leads to the consent page and back with a code (PKCE as the platform adds it)', async () => {
    const { code, verifier } = await connect({ pkce: true });
    const tokens = await exchange(code, verifier);
    assert.match(tokens.access_token, /\S{20,}/);
    assert.match(tokens.refresh_token, /\S{20,}/);
    assert.deepEqual(Object.keys(tokens).sort(), ['access_token', 'refresh_token']);
  });

  test('the connection test calls /oauth/userinfo with the new token; the label is the email', async () => {
    const { code, verifier } = await connect({ pkce: true });
    const tokens = await exchange(code, verifier);
    const result = await invoke<{ status: number; json: Record<string, unknown>; data: Record<string, unknown> }>(App.authentication.test, {
      authData: tokens,
    });
    assert.equal(result.status, 200);
    // connectionLabel is '{{json.email}}': the platform renders it against this result.
    assert.equal(result.json.email, member.email);
    assert.deepEqual(result.data, {
      sub: member.user.id,
      email: member.email,
      name: member.email,
      organization: { id: member.org.id, name: member.org.name },
    });
    // Nothing of the request (bearer token, client secret, refresh token) is in the output.
    const output = JSON.stringify(result);
    for (const secret of [tokens.access_token, tokens.refresh_token, client.client_secret]) assert.equal(output.includes(secret), false);
  });

  test('a code obtained without PKCE is exchanged without a code_verifier', async () => {
    const { code } = await connect({ pkce: false });
    const tokens = await exchange(code);
    const result = await invoke<{ json: { email: string } }>(App.authentication.test, { authData: tokens });
    assert.equal(result.json.email, member.email);
  });

  test('a PKCE code exchanged with the wrong verifier is refused (invalid_grant)', async () => {
    const { code } = await connect({ pkce: true });
    await assert.rejects(exchange(code, randomBytes(32).toString('base64url')), /invalid_grant/);
  });

  test('a code used twice is refused the second time, and the tokens of the first use stop working', async () => {
    const { code, verifier } = await connect({ pkce: true });
    const first = await exchange(code, verifier);
    await assert.rejects(exchange(code, verifier), /invalid_grant/);
    await assert.rejects(invoke(App.authentication.test, { authData: first }), (err: Error) => err.name === 'RefreshAuthError');
  });

  test('refreshAccessToken gets a new access token and the rotated refresh token; the new pair passes the test', async () => {
    const { code, verifier } = await connect({ pkce: true });
    const tokens = await exchange(code, verifier);
    const refreshed = await invoke<{ access_token: string; refresh_token: string }>(oauth2.refreshAccessToken, { authData: tokens });
    assert.notEqual(refreshed.access_token, tokens.access_token);
    assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
    const result = await invoke<{ json: { email: string } }>(App.authentication.test, { authData: refreshed });
    assert.equal(result.json.email, member.email);
    // The rotated token refreshes again (the platform stores what refreshAccessToken returned).
    const again = await invoke<{ access_token: string }>(oauth2.refreshAccessToken, { authData: refreshed });
    assert.notEqual(again.access_token, refreshed.access_token);
  });

  test('a refused access token asks the platform to refresh (RefreshAuthError), which autoRefresh acts on', async () => {
    await assert.rejects(
      invoke(App.authentication.test, { authData: { access_token: 'sbat_not_a_real_token', refresh_token: 'x' } }),
      (err: Error) => err.name === 'RefreshAuthError',
    );
  });

  test('wrong client credentials at refresh mean reconnecting (ExpiredAuthError), not another refresh', async () => {
    const { code, verifier } = await connect({ pkce: true });
    const tokens = await exchange(code, verifier);
    try {
      process.env.CLIENT_SECRET = 'sbs_wrong_secret';
      await assert.rejects(invoke(oauth2.refreshAccessToken, { authData: tokens }), (err: Error) => {
        assert.equal(err.name, 'ExpiredAuthError');
        assert.match(err.message, /invalid_client/);
        assert.doesNotMatch(err.message, /sbs_wrong_secret/);
        return true;
      });
    } finally {
      useSwitchboard(t.url, client);
    }
  });

  test('a refresh token from a revoked grant is refused with the 4xx the platform marks the connection stale on', async () => {
    const { code, verifier } = await connect({ pkce: true });
    const tokens = await exchange(code, verifier);
    await fetch(`${t.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: tokens.refresh_token, client_id: client.client_id, client_secret: client.client_secret }),
    });
    await assert.rejects(invoke(oauth2.refreshAccessToken, { authData: tokens }), (err: Error) => {
      assert.equal(err.name, 'ResponseError');
      const detail = JSON.parse(err.message) as { status: number; content: string };
      assert.equal(detail.status, 400);
      assert.equal(JSON.parse(detail.content).error, 'invalid_grant');
      return true;
    });
  });
});
