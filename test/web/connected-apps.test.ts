import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember, PASSWORD } from '../helpers/fixtures.ts';
import { createClient, issueTokens, platformHeaders, type TestClient } from '../helpers/oauth.ts';
import { hiddenInputs, UserAgent } from '../helpers/user-agent.ts';
import { requirePlatformToken } from '../../src/oauth/platform-guard.ts';

describe('connected apps page', () => {
  let t: TestApp;
  let client: TestClient;
  before(async () => {
    t = await startTestApp({
      listen: true,
      setup: (app) => app.get('/test/guarded', { preHandler: requirePlatformToken('calls:read') }, async () => ({ ok: true })),
    });
    client = await createClient(t.db.pool, { name: 'Zap Platform' });
  });
  after(() => t.close());

  async function signIn(email: string) {
    const agent = new UserAgent(t.url);
    const login = await agent.get('/login?return_to=/connected-apps');
    const res = await agent.post('/login', { ...hiddenInputs(login.body, '/login'), email, password: PASSWORD });
    assert.equal(res.location, '/connected-apps');
    return agent;
  }

  test('needs a signed-in user', async () => {
    const res = await new UserAgent(t.url).get('/connected-apps');
    assert.equal(res.status, 302);
    assert.equal(res.location, '/login?return_to=%2Fconnected-apps');
  });

  test("lists the organization's connected apps, and revoking one ends its tokens at once", async () => {
    const member = await createMember(t.db.pool);
    const tokens = await issueTokens(t.db.pool, {
      client,
      userId: member.user.id,
      organizationId: member.org.id,
      scopes: ['calls:read', 'contacts:read'],
    });
    const headers = platformHeaders(tokens, client);
    assert.equal((await t.app.inject({ url: '/test/guarded', headers })).statusCode, 200);

    const agent = await signIn(member.email);
    const page = await agent.get('/connected-apps');
    assert.equal(page.status, 200);
    assert.match(page.body, /Zap Platform/);
    assert.match(page.body, /contacts:read/);

    const revoked = await agent.post('/connected-apps/revoke', hiddenInputs(page.body, '/connected-apps/revoke'));
    assert.equal(revoked.status, 303);
    assert.equal((await t.app.inject({ url: '/test/guarded', headers })).statusCode, 401);
    const after = await agent.get('/connected-apps');
    assert.doesNotMatch(after.body, /Zap Platform/);
    assert.match(after.body, /No applications are connected/);
  });

  test("another organization's connections are neither listed nor revocable", async () => {
    const owner = await createMember(t.db.pool);
    const tokens = await issueTokens(t.db.pool, { client, userId: owner.user.id, organizationId: owner.org.id });
    const stranger = await createMember(t.db.pool);
    const agent = await signIn(stranger.email);
    const page = await agent.get('/connected-apps');
    assert.doesNotMatch(page.body, /Zap Platform/);
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1]!;
    const res = await agent.post('/connected-apps/revoke', { csrf, client_id: client.client_id });
    assert.equal(res.status, 303);
    assert.equal((await t.app.inject({ url: '/test/guarded', headers: platformHeaders(tokens, client) })).statusCode, 200);
  });

  test('revoking without the CSRF token does nothing', async () => {
    const member = await createMember(t.db.pool);
    const tokens = await issueTokens(t.db.pool, { client, userId: member.user.id, organizationId: member.org.id });
    const agent = await signIn(member.email);
    const res = await agent.post('/connected-apps/revoke', { client_id: client.client_id });
    assert.equal(res.status, 403);
    assert.equal((await t.app.inject({ url: '/test/guarded', headers: platformHeaders(tokens, client) })).statusCode, 200);
  });

  test('logging out ends the web session', async () => {
    const member = await createMember(t.db.pool);
    const agent = await signIn(member.email);
    const page = await agent.get('/connected-apps');
    const out = await agent.post('/logout', hiddenInputs(page.body, '/logout'));
    assert.equal(out.status, 303);
    assert.equal((await agent.get('/connected-apps')).status, 302);
  });
});
