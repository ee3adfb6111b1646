// Issue 37, item 4: WEBHOOK_RATE_LIMIT, one budget per OAuth grant (or per
// user with an x-user-token) on /webhooks/subscribe and the webhook management
// routes, so a connected platform cannot fill the audit log with subscribe and
// unsubscribe pairs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from '../helpers/app.ts';
import { createMember } from '../helpers/fixtures.ts';
import { connectPlatform, startWebhookApp, type Connection } from '../helpers/webhooks.ts';

function assertLimited(res: LightMyRequestResponse) {
  assert.equal(res.statusCode, 429, res.body);
  assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
  assert.equal(res.json().code, 'REQUEST_RATE_LIMITED');
  assert.equal(res.json().status, 429);
  const retryAfter = Number(res.headers['retry-after']);
  assert.ok(Number.isInteger(retryAfter) && retryAfter > 0 && retryAfter <= 60, `retry-after ${res.headers['retry-after']}`);
  assert.equal(res.headers['ratelimit-limit'], '3');
  assert.equal(res.headers['ratelimit-remaining'], '0');
}

describe('WEBHOOK_RATE_LIMIT', () => {
  let t: TestApp;
  let a: Connection;
  before(async () => {
    t = await startWebhookApp({ WEBHOOK_RATE_LIMIT: '3/min' });
    a = await connectPlatform(t);
  });
  after(() => t.close());

  const subscribe = (c: Connection, method: 'POST' | 'DELETE', hookUrl: string) =>
    t.app.inject({ method, url: '/webhooks/subscribe', headers: c.headers, payload: { hookUrl } });
  const auditEvents = async (organizationId: string) =>
    (await t.db.pool.query('SELECT 1 FROM audit_events WHERE organization_id = $1', [organizationId])).rows.length;

  test("a grant's fourth request in the window is a 429 problem and changes nothing; another grant and a user have budgets of their own", async () => {
    const hookUrl = 'https://hooks.example.com/pairs';
    assert.equal((await subscribe(a, 'POST', hookUrl)).statusCode, 201);
    const second = await subscribe(a, 'DELETE', hookUrl);
    assert.equal(second.statusCode, 200);
    assert.equal(second.headers['ratelimit-remaining'], '1');
    assert.equal((await subscribe(a, 'POST', hookUrl)).statusCode, 201);
    const events = await auditEvents(a.member.org.id);

    assertLimited(await subscribe(a, 'DELETE', hookUrl));
    assertLimited(await t.app.inject({ url: '/webhooks', headers: a.headers }));
    assert.equal(await auditEvents(a.member.org.id), events, 'no event written past the limit');
    const { rows } = await t.db.pool.query('SELECT 1 FROM webhook_subscriptions WHERE callback_url = $1', [hookUrl]);
    assert.equal(rows.length, 1, 'the refused unsubscribe removed nothing');

    // The same platform client acting for another user of the organization: another grant, another budget.
    const other = await connectPlatform(t, { client: a.client, member: await createMember(t.db.pool, { org: a.member.org }) });
    assert.equal((await t.app.inject({ url: '/webhooks', headers: other.headers })).statusCode, 200);
    // An organization user manages the webhooks with a budget of their own.
    const user = { 'x-user-token': a.member.token };
    for (let i = 0; i < 3; i++) assert.equal((await t.app.inject({ url: '/webhooks', headers: user })).statusCode, 200);
    assertLimited(await t.app.inject({ url: '/webhooks', headers: user }));
  });

  test('an unauthenticated request is a 401 and draws on no budget', async () => {
    const res = await t.app.inject({ url: '/webhooks', headers: { 'x-user-token': 'not-a-token' } });
    assert.equal(res.statusCode, 401);
  });
});
