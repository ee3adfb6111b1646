import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { connectPlatform, startWebhookApp } from '../helpers/webhooks.ts';

describe('POST and DELETE /webhooks/subscribe, GET and DELETE /webhooks', () => {
  let t: TestApp;
  before(async () => {
    t = await startWebhookApp();
  });
  after(() => t.close());

  const subscribe = (headers: Record<string, string>, payload: object) =>
    t.app.inject({ method: 'POST', url: '/webhooks/subscribe', headers, payload });
  const unsubscribe = (headers: Record<string, string>, payload: object) =>
    t.app.inject({ method: 'DELETE', url: '/webhooks/subscribe', headers, payload });

  test('subscribing returns 201 {id, event, callback_url, filters}; the same URL again returns 200 and the same id', async () => {
    const org = await connectPlatform(t);
    const hookUrl = 'https://127.0.0.1:9/hooks/catch/123/abc?x=1';
    const created = await subscribe(org.headers, { hookUrl });
    assert.equal(created.statusCode, 201);
    const body = created.json();
    assert.deepEqual(Object.keys(body).sort(), ['callback_url', 'event', 'filters', 'id']);
    assert.deepEqual(body.filters, {});
    assert.match(body.id, /^[0-9a-f-]{36}$/);
    assert.equal(body.event, 'call.completed');
    assert.equal(body.callback_url, hookUrl);

    const again = await subscribe(org.headers, { hookUrl, event: 'call.completed' });
    assert.equal(again.statusCode, 200);
    assert.deepEqual(again.json(), body);
  });

  test('subscribing again with a secret replaces the secret; the secret is stored encrypted and never returned', async () => {
    const org = await connectPlatform(t);
    const hookUrl = 'https://127.0.0.1:9/secret';
    const first = await subscribe(org.headers, { hookUrl, secret: 'first-secret-value' });
    assert.equal(first.statusCode, 201);
    assert.ok(!first.body.includes('first-secret-value'));
    const { rows: before } = await t.db.pool.query('SELECT secret_ciphertext FROM webhook_subscriptions WHERE id = $1', [first.json().id]);
    assert.ok(Buffer.isBuffer(before[0].secret_ciphertext));
    assert.ok(!before[0].secret_ciphertext.includes(Buffer.from('first-secret-value')));

    const second = await subscribe(org.headers, { hookUrl, secret: 'second-secret-value' });
    assert.equal(second.statusCode, 200);
    const { rows: after } = await t.db.pool.query('SELECT secret_ciphertext FROM webhook_subscriptions WHERE id = $1', [first.json().id]);
    assert.notDeepEqual(after[0].secret_ciphertext, before[0].secret_ciphertext);

    const noSecret = await subscribe(org.headers, { hookUrl });
    assert.equal(noSecret.statusCode, 200);
    const { rows: kept } = await t.db.pool.query('SELECT secret_ciphertext FROM webhook_subscriptions WHERE id = $1', [first.json().id]);
    assert.deepEqual(kept[0].secret_ciphertext, after[0].secret_ciphertext, 'subscribing again without a secret keeps the secret');

    const list = await t.app.inject({ url: '/webhooks', headers: { 'x-user-token': org.member.token } });
    assert.equal(list.json()[0].has_secret, true);
    assert.ok(!list.body.includes('secret-value'));
  });

  test('unsubscribe removes exactly that URL, and is idempotent', async () => {
    const org = await connectPlatform(t);
    await subscribe(org.headers, { hookUrl: 'https://127.0.0.1:9/a' });
    await subscribe(org.headers, { hookUrl: 'https://127.0.0.1:9/b' });
    const removed = await unsubscribe(org.headers, { hookUrl: 'https://127.0.0.1:9/a' });
    assert.equal(removed.statusCode, 200);
    assert.deepEqual(removed.json(), { success: true });
    const again = await unsubscribe(org.headers, { hookUrl: 'https://127.0.0.1:9/a' });
    assert.equal(again.statusCode, 200);
    assert.deepEqual(again.json(), { success: true });
    const never = await unsubscribe(org.headers, { hookUrl: 'https://127.0.0.1:9/never-subscribed' });
    assert.deepEqual(never.json(), { success: true });
    const list = await t.app.inject({ url: '/webhooks', headers: { 'x-user-token': org.member.token } });
    assert.deepEqual(
      list.json().map((s: { callback_url: string }) => s.callback_url),
      ['https://127.0.0.1:9/b'],
    );
  });

  test('GET /webhooks lists the subscriptions with their status; DELETE /webhooks/{id} removes one', async () => {
    const org = await connectPlatform(t);
    const hook = (await subscribe(org.headers, { hookUrl: 'https://127.0.0.1:9/listed' })).json();
    for (const headers of [{ 'x-user-token': org.member.token }, org.headers]) {
      const list = await t.app.inject({ url: '/webhooks', headers });
      assert.equal(list.statusCode, 200);
      const [view] = list.json();
      assert.equal(view.id, hook.id);
      assert.equal(view.status, 'active');
      assert.equal(view.client_id, org.client.client_id);
      assert.equal(view.has_secret, false);
      assert.equal(view.disabled_at, null);
    }
    const one = await t.app.inject({ url: `/webhooks/${hook.id}`, headers: org.headers });
    assert.equal(one.json().callback_url, 'https://127.0.0.1:9/listed');
    const deleted = await t.app.inject({ method: 'DELETE', url: `/webhooks/${hook.id}`, headers: { 'x-user-token': org.member.token } });
    assert.equal(deleted.statusCode, 204);
    const gone = await t.app.inject({ method: 'DELETE', url: `/webhooks/${hook.id}`, headers: { 'x-user-token': org.member.token } });
    assert.equal(gone.statusCode, 404);
    assert.equal(gone.json().code, 'WEBHOOK_SUBSCRIPTION_NOT_FOUND');
  });

  test("a user sees every client's subscriptions of the organization, a platform only its own", async () => {
    const first = await connectPlatform(t);
    const second = await connectPlatform(t, { member: first.member });
    const a = (await subscribe(first.headers, { hookUrl: 'https://127.0.0.1:9/first' })).json();
    const b = (await subscribe(second.headers, { hookUrl: 'https://127.0.0.1:9/first' })).json();
    assert.notEqual(a.id, b.id, 'the same URL under two clients is two subscriptions');
    const asUser = await t.app.inject({ url: '/webhooks', headers: { 'x-user-token': first.member.token } });
    assert.deepEqual(new Set(asUser.json().map((s: { id: string }) => s.id)), new Set([a.id, b.id]));
    const asFirst = await t.app.inject({ url: '/webhooks', headers: first.headers });
    assert.deepEqual(
      asFirst.json().map((s: { id: string }) => s.id),
      [a.id],
    );
    const foreign = await t.app.inject({ url: `/webhooks/${b.id}`, headers: first.headers });
    assert.equal(foreign.statusCode, 404);
    // Unsubscribing by URL only touches the caller's own client.
    await unsubscribe(first.headers, { hookUrl: 'https://127.0.0.1:9/first' });
    const left = await t.app.inject({ url: '/webhooks', headers: { 'x-user-token': first.member.token } });
    assert.deepEqual(
      left.json().map((s: { id: string }) => s.id),
      [b.id],
    );
  });

  test('the platform may send its JSON body without Content-Type (docs/interface.md §5.1 marks it optional)', async () => {
    const org = await connectPlatform(t);
    const body = JSON.stringify({ hookUrl: 'https://127.0.0.1:9/no-content-type' });
    const bare = await t.app.inject({ method: 'POST', url: '/webhooks/subscribe', headers: org.headers, payload: body });
    assert.equal(bare.statusCode, 201, bare.body);
    // What `curl -d` sends by default.
    const form = await t.app.inject({
      method: 'POST',
      url: '/webhooks/subscribe',
      headers: { ...org.headers, 'content-type': 'application/x-www-form-urlencoded' },
      payload: body,
    });
    assert.equal(form.statusCode, 200, form.body);
    assert.equal(form.json().id, bare.json().id);
    const removed = await t.app.inject({ method: 'DELETE', url: '/webhooks/subscribe', headers: org.headers, payload: body });
    assert.deepEqual(removed.json(), { success: true });
    const broken = await t.app.inject({ method: 'POST', url: '/webhooks/subscribe', headers: org.headers, payload: '{"hookUrl":' });
    assert.equal(broken.statusCode, 400);
    assert.equal(broken.json().code, 'REQUEST_INVALID_JSON');
  });
});
