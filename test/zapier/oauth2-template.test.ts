// @own-test-process: zapier-platform-core's tester replaces http.request and https.request for the whole process
// (create-http-patch.js), with a version that drops a third argument (url, options, callback).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BeforeRequestMiddleware } from 'zapier-platform-core';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember, PASSWORD, type Member } from '../helpers/fixtures.ts';
import { createClient, type TestClient } from '../helpers/oauth.ts';
import { completeCall } from '../helpers/webhooks.ts';
import { App, type AppMethod, appInvoker, authorizeAccount, useSwitchboard, ZAPIER_REDIRECT_URI } from '../helpers/zapier.ts';

// The beforeRequest of Zapier's OAuth2 example app and CLI template
// (zapier-platform example-apps/oauth2), with types: the bearer token goes on
// EVERY request, the token endpoint's refresh call included, where it is the
// old (expired) access token next to client_id/client_secret in the body.
const includeBearerToken: BeforeRequestMiddleware = (request, _z, bundle) => {
  if (bundle.authData.access_token) {
    request.headers = { ...request.headers, Authorization: `Bearer ${bundle.authData.access_token}` };
  }
  return request;
};

// A developer who pasted the template into this app: the template's function
// first; the app's own middleware then adds only the client headers the
// platform endpoints need (docs/interface.md §5.1), as it leaves an Authorization
// header that is already there alone.
const TemplateApp = { ...App, beforeRequest: [includeBearerToken, ...App.beforeRequest] };
const oauth2 = TemplateApp.authentication.oauth2Config;
const invoke = appInvoker(TemplateApp);

type AuthData = { access_token: string; refresh_token: string };

/**
 * What the platform does with autoRefresh: run the method; on RefreshAuthError
 * run refreshAccessToken with the stored authData (old access token included),
 * store the answer and run the method once more.
 */
async function invokeWithAutoRefresh<T>(method: AppMethod, bundle: { authData: AuthData }): Promise<{ result: T; refreshed: boolean }> {
  try {
    return { result: await invoke<T>(method, bundle), refreshed: false };
  } catch (err) {
    if ((err as Error).name !== 'RefreshAuthError') throw err;
  }
  const fresh = await invoke<AuthData>(oauth2.refreshAccessToken, bundle);
  bundle.authData = { ...bundle.authData, ...fresh };
  return { result: await invoke<T>(method, bundle), refreshed: true };
}

// RFC 6749 §2.3.1: only `Authorization: Basic` is client authentication at the
// token endpoint; any other scheme is ignored and the body credentials decide.
describe("Zapier's OAuth2 template (Bearer on every request) against Switchboard", () => {
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

  test('authorize → token → test → refresh → performList with an expired token, refreshed by autoRefresh', async () => {
    assert.equal(oauth2.autoRefresh, true);
    const { code, verifier } = await authorizeAccount(t.url, { email: member.email, password: PASSWORD });
    // The code exchange: authData is still empty, so the template adds nothing.
    const tokens = await invoke<AuthData>(oauth2.getAccessToken, {
      authData: {},
      inputData: { code, redirect_uri: ZAPIER_REDIRECT_URI, code_verifier: verifier },
    });
    assert.match(tokens.access_token, /\S{20,}/);

    const label = await invoke<{ json: { email: string } }>(TemplateApp.authentication.test, { authData: tokens });
    assert.equal(label.json.email, member.email);

    // An explicit refresh: the request carries `Authorization: Bearer <current access token>`.
    const refreshed = await invoke<AuthData>(oauth2.refreshAccessToken, { authData: tokens });
    assert.notEqual(refreshed.access_token, tokens.access_token);
    assert.notEqual(refreshed.refresh_token, tokens.refresh_token);

    const call = await completeCall(t, member, { summary: 'Template app sample' });
    // The access token expires; performList gets a 401, the platform refreshes
    // with the expired token in the Authorization header, and retries.
    await t.db.pool.query(
      `UPDATE oauth_access_tokens SET expires_at = now() - interval '1 second'
        WHERE grant_id IN (SELECT id FROM oauth_grants WHERE user_id = $1)`,
      [member.user.id],
    );
    const bundle = { authData: refreshed };
    const { result, refreshed: didRefresh } = await invokeWithAutoRefresh<Array<{ id: string }>>(
      TemplateApp.triggers.call_completed.operation.performList,
      bundle,
    );
    assert.equal(didRefresh, true, 'the expired token was refused, so the platform had to refresh');
    assert.notEqual(bundle.authData.access_token, refreshed.access_token);
    assert.deepEqual(
      result.map((item) => item.id),
      [call.id],
    );
  });

  test('the refresh with a Bearer header and wrong body credentials is still invalid_client (the body decides)', async () => {
    const { code, verifier } = await authorizeAccount(t.url, { email: member.email, password: PASSWORD });
    const tokens = await invoke<AuthData>(oauth2.getAccessToken, {
      authData: {},
      inputData: { code, redirect_uri: ZAPIER_REDIRECT_URI, code_verifier: verifier },
    });
    try {
      process.env.CLIENT_SECRET = 'sbs_wrong_secret';
      await assert.rejects(invoke(oauth2.refreshAccessToken, { authData: tokens }), (err: Error) => {
        assert.equal(err.name, 'ExpiredAuthError');
        assert.match(err.message, /invalid_client/);
        return true;
      });
    } finally {
      useSwitchboard(t.url, client);
    }
  });
});
