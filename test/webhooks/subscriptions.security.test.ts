import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { createClient, issueTokens } from '../helpers/oauth.ts';
import { connectPlatform, startWebhookApp, subscribeHook } from '../helpers/webhooks.ts';

describe('webhook endpoints: credentials and organization boundaries', () => {
  let t: TestApp;
  before(async () => {
    t = await startWebhookApp();
  });
  after(() => t.close());

  const payload = { hookUrl: 'https://127.0.0.1:9/guarded' };

  for (const method of ['POST', 'DELETE'] as const) {
    test(`${method} /webhooks/subscribe needs all three headers: bearer token, x-client-id, x-client-secret`, async () => {
      const org = await connectPlatform(t);
      const send = (headers: Record<string, string>) => t.app.inject({ method, url: '/webhooks/subscribe', headers, payload });
      const { authorization, 'x-client-id': clientId, 'x-client-secret': clientSecret } = org.headers;
      const cases: [string, Record<string, string>, string][] = [
        ['no headers', {}, 'OAUTH_TOKEN_MISSING'],
        ['bearer only', { authorization: authorization! }, 'OAUTH_CLIENT_MISSING'],
        ['no x-client-secret', { authorization: authorization!, 'x-client-id': clientId! }, 'OAUTH_CLIENT_MISSING'],
        ['no x-client-id', { authorization: authorization!, 'x-client-secret': clientSecret! }, 'OAUTH_CLIENT_MISSING'],
        ['no bearer', { 'x-client-id': clientId!, 'x-client-secret': clientSecret! }, 'OAUTH_TOKEN_MISSING'],
        ['wrong secret', { ...org.headers, 'x-client-secret': 'sbs_wrong' }, 'OAUTH_CLIENT_INVALID'],
        ['wrong token', { ...org.headers, authorization: 'Bearer sba_unknown' }, 'OAUTH_TOKEN_INVALID'],
        ['x-user-token instead', { 'x-user-token': org.member.token }, 'OAUTH_TOKEN_MISSING'],
      ];
      for (const [name, headers, code] of cases) {
        const res = await send(headers);
        assert.equal(res.statusCode, 401, name);
        assert.equal(res.json().code, code, name);
        assert.match(String(res.headers['www-authenticate']), /^Bearer /, name);
      }
      assert.equal((await send(org.headers)).statusCode, method === 'POST' ? 201 : 200);
    });
  }

  test("another client's id and secret with this token are refused", async () => {
    const org = await connectPlatform(t);
    const other = await createClient(t.db.pool, { name: 'Other Platform' });
    const res = await t.app.inject({
      method: 'POST',
      url: '/webhooks/subscribe',
      payload,
      headers: { ...org.headers, 'x-client-id': other.client_id, 'x-client-secret': other.client_secret },
    });
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().code, 'OAUTH_CLIENT_INVALID');
  });

  test('a token without calls:read gets 403 insufficient_scope', async () => {
    const org = await connectPlatform(t, { scopes: ['contacts:read'] });
    const res = await t.app.inject({ method: 'POST', url: '/webhooks/subscribe', headers: org.headers, payload });
    assert.equal(res.statusCode, 403);
    assert.equal(res.json().code, 'OAUTH_INSUFFICIENT_SCOPE');
    assert.match(String(res.headers['www-authenticate']), /error="insufficient_scope"/);
  });

  test('a revoked grant stops subscribing at once', async () => {
    const org = await connectPlatform(t);
    const tokens = await issueTokens(t.db.pool, { client: org.client, userId: org.member.user.id, organizationId: org.member.org.id });
    await t.db.pool.query('UPDATE oauth_grants SET revoked_at = now() WHERE id = $1', [tokens.grant_id]);
    const res = await t.app.inject({
      method: 'POST',
      url: '/webhooks/subscribe',
      payload,
      headers: { ...org.headers, authorization: `Bearer ${tokens.access_token}` },
    });
    assert.equal(res.statusCode, 401);
  });

  test("another organization's subscription answers 404 everywhere, and is left untouched", async () => {
    const mine = await connectPlatform(t);
    const theirs = await connectPlatform(t, { client: mine.client });
    const hook = await subscribeHook(t, theirs, payload);
    for (const headers of [{ 'x-user-token': mine.member.token }, mine.headers]) {
      for (const [method, url] of [
        ['GET', `/webhooks/${hook.id}`],
        ['DELETE', `/webhooks/${hook.id}`],
        ['POST', `/webhooks/${hook.id}/enable`],
        ['GET', `/webhooks/${hook.id}/deliveries`],
      ] as const) {
        const res = await t.app.inject({ method, url, headers });
        assert.equal(res.statusCode, 404, `${method} ${url}`);
        assert.equal(res.json().code, 'WEBHOOK_SUBSCRIPTION_NOT_FOUND');
        assert.ok(!res.body.includes(hook.callback_url));
      }
      const list = await t.app.inject({ url: '/webhooks', headers });
      assert.ok(!list.json().some((s: { id: string }) => s.id === hook.id));
    }
    // Unsubscribing the same URL from my organization leaves theirs.
    await t.app.inject({ method: 'DELETE', url: '/webhooks/subscribe', headers: mine.headers, payload });
    const still = await t.app.inject({ url: `/webhooks/${hook.id}`, headers: { 'x-user-token': theirs.member.token } });
    assert.equal(still.statusCode, 200);
  });

  test("another client's subscription in the same organization answers 404 to a platform, and is seen by the organization's users", async () => {
    const mine = await connectPlatform(t);
    const theirs = await connectPlatform(t, { member: mine.member });
    const hook = await subscribeHook(t, theirs, payload);
    const since = new Date(Date.now() - 60_000).toISOString();
    const routes = [
      ['GET', `/webhooks/${hook.id}`, undefined],
      ['GET', `/webhooks/${hook.id}/deliveries`, undefined],
      ['POST', `/webhooks/${hook.id}/recover`, { since }],
      ['POST', `/webhooks/${hook.id}/enable`, undefined],
      ['DELETE', `/webhooks/${hook.id}`, undefined],
    ] as const;
    for (const [method, url, body] of routes) {
      const res = await t.app.inject({ method, url, headers: mine.headers, ...(body ? { payload: body } : {}) });
      assert.equal(res.statusCode, 404, `${method} ${url}`);
      assert.equal(res.json().code, 'WEBHOOK_SUBSCRIPTION_NOT_FOUND', `${method} ${url}`);
    }
    const listed = await t.app.inject({ url: '/webhooks', headers: mine.headers });
    assert.ok(!listed.json().some((s: { id: string }) => s.id === hook.id));
    // The organization's user sees every client's subscription: the same routes answer.
    const user = { 'x-user-token': mine.member.token };
    for (const [method, url, body] of routes.slice(0, 3)) {
      const res = await t.app.inject({ method, url, headers: user, ...(body ? { payload: body } : {}) });
      assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
    }
  });

  test('management routes need the three platform headers (or x-user-token), and refuse a bare bearer token', async () => {
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/bearer' });
    const platform = await t.app.inject({ url: '/webhooks', headers: org.headers });
    assert.equal(platform.statusCode, 200);
    assert.deepEqual(
      platform.json().map((s: { id: string }) => s.id),
      [hook.id],
    );
    const bearer = await t.app.inject({ url: '/webhooks', headers: { authorization: `Bearer ${org.accessToken}` } });
    assert.equal(bearer.statusCode, 401);
    assert.equal(bearer.json().code, 'OAUTH_CLIENT_MISSING');
    const none = await t.app.inject({ url: '/webhooks' });
    assert.equal(none.statusCode, 401);
    const badUser = await t.app.inject({ url: '/webhooks', headers: { 'x-user-token': 'sbu_nope' } });
    assert.equal(badUser.statusCode, 401);
    assert.equal(badUser.json().code, 'AUTH_TOKEN_INVALID');
    const badClient = await t.app.inject({ url: '/webhooks', headers: { ...org.headers, 'x-client-secret': 'wrong' } });
    assert.equal(badClient.statusCode, 401, 'client headers, when sent, must verify');
  });
});
