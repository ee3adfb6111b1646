// The home dashboard over real HTTP: a visitor is sent to sign in, /ui leads
// home, and the subscriptions needing attention say why, each linked to its page.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { UserAgent } from '../helpers/user-agent.ts';
import { signedInAgent } from '../helpers/web.ts';
import { connectPlatform, subscribeHook, WEBHOOK_TEST_ENV } from '../helpers/webhooks.ts';

describe('home dashboard', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ listen: true, env: WEBHOOK_TEST_ENV });
  });
  after(() => t.close());

  test('lists failing and disabled subscriptions with the reason and a link; healthy ones are not listed', async () => {
    const org = await connectPlatform(t);
    const healthy = await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/healthy' });
    const failing = await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/failing' });
    const revoked = await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/revoked' });
    await t.db.pool.query("UPDATE webhook_subscriptions SET failing_since = now() - interval '1 hour' WHERE id = $1", [failing.id]);
    await t.db.pool.query(
      "UPDATE webhook_subscriptions SET status = 'disabled', disabled_at = now(), disabled_reason = 'grant_revoked' WHERE id = $1",
      [revoked.id],
    );
    const agent = await signedInAgent(t.url, org.member.email);
    const home = await agent.get('/');
    assert.equal(home.status, 200);
    const attention = /<section class="card" aria-labelledby="attention">([\s\S]*?)<\/section>/.exec(home.body)![1]!;
    assert.match(attention, new RegExp(`href="/ui/webhooks/${failing.id}"[\\s\\S]*Failing[\\s\\S]*failing since`));
    assert.match(attention, new RegExp(`href="/ui/webhooks/${revoked.id}"[\\s\\S]*Disabled[\\s\\S]*the app&#39;s access was revoked`));
    assert.doesNotMatch(attention, new RegExp(healthy.id));
    assert.match(home.body, /<section class="card" aria-labelledby="apps">[\s\S]*Zap Platform/);
  });

  test('a visitor is sent to sign in; /ui leads home', async () => {
    const visitor = await new UserAgent(t.url).get('/');
    assert.deepEqual([visitor.status, visitor.location], [302, '/login']);
    assert.deepEqual([(await new UserAgent(t.url).get('/ui')).location], ['/']);
  });
});
