// Answers to requests that carry credentials are one organization's data:
// they must not be stored by a shared cache in front of the service.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember, type Member } from '../helpers/fixtures.ts';
import { createClient, issueTokens, platformHeaders } from '../helpers/oauth.ts';

describe('Cache-Control on credentialed answers', () => {
  let t: TestApp;
  let member: Member;
  before(async () => {
    t = await startTestApp();
    member = await createMember(t.db.pool);
  });
  after(() => t.close());

  test('x-user-token answers are no-store, on success and on failure', async () => {
    for (const url of ['/locations', '/service-areas', '/calls', '/webhooks', '/auth/session']) {
      const res = await t.app.inject({ url, headers: { 'x-user-token': member.token } });
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.headers['cache-control'], 'no-store', url);
    }
    const refused = await t.app.inject({ url: '/locations', headers: { 'x-user-token': 'sbu_unknown' } });
    assert.equal(refused.statusCode, 401);
    assert.equal(refused.headers['cache-control'], 'no-store');
  });

  test('OAuth-token answers are no-store', async () => {
    const client = await createClient(t.db.pool);
    const tokens = await issueTokens(t.db.pool, { client, userId: member.user.id, organizationId: member.org.id });
    const recent = await t.app.inject({ url: '/calls/recent', headers: platformHeaders(tokens, client) });
    assert.equal(recent.statusCode, 200);
    assert.equal(recent.headers['cache-control'], 'no-store');
    const calls = await t.app.inject({ url: '/calls', headers: platformHeaders(tokens, client) });
    assert.equal(calls.statusCode, 200);
    assert.equal(calls.headers['cache-control'], 'no-store');
  });

  test('public answers keep their own caching', async () => {
    const metadata = await t.app.inject({ url: '/.well-known/oauth-authorization-server' });
    assert.equal(metadata.headers['cache-control'], 'public, max-age=300');
    const health = await t.app.inject({ url: '/healthz' });
    assert.equal(health.headers['cache-control'], undefined);
  });
});
