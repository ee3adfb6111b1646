// @own-test-process: zapier-platform-core's tester replaces http.request and https.request for the whole process
// (create-http-patch.js), with a version that drops a third argument (url, options, callback).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember, type Member } from '../helpers/fixtures.ts';
import { startHttpsTarget, type HttpsTarget } from '../helpers/https-target.ts';
import { createClient, issueTokens, type TestClient } from '../helpers/oauth.ts';
import { App, invoke, useSwitchboard } from '../helpers/zapier.ts';

type Z = { request: (options: { url: string; headers?: Record<string, string> }) => Promise<{ status: number; data: unknown }> };

// The app's beforeRequest/afterResponse middleware, run by zapier-platform-core
// against a real Switchboard and a real third-party HTTPS server.
describe('Zapier app request middleware', () => {
  let t: TestApp;
  let client: TestClient;
  let member: Member;
  let outsider: HttpsTarget;

  before(async () => {
    t = await startTestApp({ listen: true });
    client = await createClient(t.db.pool, { name: 'Zapier' });
    member = await createMember(t.db.pool);
    outsider = await startHttpsTarget(() => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '{}' }));
    useSwitchboard(t.url, client);
  });
  after(async () => {
    await outsider.close();
    await t.close();
  });

  async function authData(scopes = ['calls:read']) {
    const tokens = await issueTokens(t.db.pool, { client, userId: member.user.id, organizationId: member.org.id, scopes });
    return { access_token: tokens.access_token, refresh_token: tokens.refresh_token };
  }

  test('requests to Switchboard carry the bearer token, x-client-id and x-client-secret (all three are required there)', async () => {
    const status = await invoke(async (z: Z) => (await z.request({ url: `${t.url}/calls/recent` })).status, { authData: await authData() });
    assert.equal(status, 200);
  });

  test('requests to any other origin carry none of the credentials', async () => {
    const before = outsider.requests.length;
    await invoke(async (z: Z) => (await z.request({ url: `${outsider.url}/elsewhere` })).status, { authData: await authData() });
    const [request] = outsider.requests.slice(before);
    assert.ok(request);
    for (const name of ['authorization', 'x-client-id', 'x-client-secret']) assert.equal(request.headers[name], undefined, name);
  });

  test('a header the request sets itself is not overwritten', async () => {
    const status = await invoke(
      async (z: Z) => (await z.request({ url: `${t.url}/calls/recent`, headers: { 'X-Client-Secret': 'sbs_not_the_secret' } })).status,
      { authData: await authData() },
    ).catch((err: Error) => err.name);
    // Switchboard refuses the wrong secret with 401, which the app turns into a refresh request.
    assert.equal(status, 'RefreshAuthError');
  });

  test('a BASE_URL with a trailing slash is used without doubling it', async () => {
    try {
      useSwitchboard(`${t.url}/`, client);
      assert.deepEqual(await invoke(App.triggers.call_completed.operation.performList, { authData: await authData() }), []);
    } finally {
      useSwitchboard(t.url, client);
    }
  });

  test('a token without calls:read gets a readable insufficient_scope error, not a refresh', async () => {
    await assert.rejects(
      invoke(App.triggers.call_completed.operation.performList, { authData: await authData(['contacts:read']) }),
      (err: Error) => {
        assert.equal(err.name, 'AppError');
        const detail = JSON.parse(err.message) as { message: string; code: string; status: number };
        assert.equal(detail.status, 403);
        assert.equal(detail.code, 'OAUTH_INSUFFICIENT_SCOPE');
        assert.match(detail.message, /calls:read/);
        return true;
      },
    );
  });
});
