// The calls and webhook pages at the HTTP level: another organization's ids
// are the 404 page and stay untouched, every form needs the CSRF token, and
// redelivery that cannot happen now is explained on the page.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { UserAgent } from '../helpers/user-agent.ts';
import { csrfToken, signedInAgent } from '../helpers/web.ts';
import { completeCall, connectPlatform, deliveriesOf, subscribeHook, WEBHOOK_TEST_ENV, type Connection } from '../helpers/webhooks.ts';

describe('calls and webhook pages: access, CSRF and organization boundaries', () => {
  let t: TestApp;
  let mine: Connection;
  let theirs: Connection;
  before(async () => {
    // No delivery worker runs: deliveries stay pending, as the tests arrange them.
    t = await startTestApp({ listen: true, env: WEBHOOK_TEST_ENV });
    mine = await connectPlatform(t);
    theirs = await connectPlatform(t, { client: mine.client });
  });
  after(() => t.close());

  async function snapshot() {
    const subscriptions = await t.db.pool.query('SELECT * FROM webhook_subscriptions ORDER BY id');
    const deliveries = await t.db.pool.query('SELECT * FROM webhook_deliveries ORDER BY id');
    return { subscriptions: subscriptions.rows, deliveries: deliveries.rows };
  }

  test('not signed in: the pages redirect to the login page', async () => {
    const agent = new UserAgent(t.url);
    for (const path of [
      '/ui/calls',
      `/ui/calls/${randomUUID()}`,
      '/ui/webhooks',
      `/ui/webhooks/${randomUUID()}`,
      `/ui/webhooks/${randomUUID()}/delete`,
    ]) {
      const res = await agent.get(path);
      assert.equal(res.status, 302, path);
      assert.equal(res.location, `/login?${new URLSearchParams({ return_to: path })}`);
    }
  });

  test("another organization's call, subscription and delivery are the 404 page, and stay untouched", async () => {
    const call = await completeCall(t, theirs.member, { summary: 'Their confidential call' });
    const hook = await subscribeHook(t, theirs, { hookUrl: 'https://127.0.0.1:9/theirs' });
    const delivered = await completeCall(t, theirs.member);
    const [delivery] = await deliveriesOf(t, hook.id);
    await t.db.pool.query("UPDATE webhook_subscriptions SET status = 'disabled', disabled_at = now() WHERE id = $1", [hook.id]);
    const agent = await signedInAgent(t.url, mine.member.email);
    const csrf = await csrfToken(agent);
    const before = await snapshot();
    const requests: ['GET' | 'POST', string][] = [
      ['GET', `/ui/calls/${call.id}`],
      ['GET', `/ui/webhooks/${hook.id}`],
      ['GET', `/ui/webhooks/${hook.id}/delete`],
      ['POST', `/ui/webhooks/${hook.id}/enable`],
      ['POST', `/ui/webhooks/${hook.id}/delete`],
      ['POST', `/ui/webhooks/${hook.id}/deliveries/${delivery!.id}/redeliver`],
      ['POST', `/ui/calls/${delivered.id}/deliveries/${delivery!.id}/redeliver`],
      ['POST', `/ui/webhooks/${hook.id}/recover`],
    ];
    for (const [method, path] of requests) {
      const res = await agent.request(
        method,
        path,
        method === 'POST' ? { csrf, since: new Date(Date.now() - 3_600_000).toISOString().slice(0, 16) } : undefined,
      );
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.match(res.body, /<h1>Not found<\/h1>/);
      assert.doesNotMatch(res.body, /confidential|theirs/);
    }
    assert.deepEqual(await snapshot(), before);
    assert.doesNotMatch((await agent.get('/ui/calls')).body, /confidential/);
    assert.doesNotMatch((await agent.get('/ui/webhooks')).body, /theirs/);
  });

  test('malformed ids and page cursors are answered with a page, not a database error', async () => {
    const agent = await signedInAgent(t.url, mine.member.email);
    for (const path of ['/ui/calls/nope', '/ui/webhooks/nope', `/ui/webhooks/${randomUUID()}`]) {
      assert.equal((await agent.get(path)).status, 404, path);
    }
    for (const path of ['/ui/calls?cursor=nope', `/ui/calls?cursor=${randomUUID()}`]) {
      const res = await agent.get(path);
      assert.equal(res.status, 400, path);
      assert.match(res.body, /cursor is not a cursor from a previous page/);
    }
  });

  test("re-enable, delete, redeliver and recover need this browser's CSRF token", async () => {
    const hook = await subscribeHook(t, mine, { hookUrl: 'https://127.0.0.1:9/csrf' });
    const call = await completeCall(t, mine.member);
    const [delivery] = await deliveriesOf(t, hook.id);
    await t.db.pool.query("UPDATE webhook_subscriptions SET status = 'disabled', disabled_at = now() WHERE id = $1", [hook.id]);
    const agent = await signedInAgent(t.url, mine.member.email);
    const before = await snapshot();
    for (const path of [
      `/ui/webhooks/${hook.id}/enable`,
      `/ui/webhooks/${hook.id}/delete`,
      `/ui/webhooks/${hook.id}/deliveries/${delivery!.id}/redeliver`,
      `/ui/calls/${call.id}/deliveries/${delivery!.id}/redeliver`,
      `/ui/webhooks/${hook.id}/recover`,
    ]) {
      const res = await agent.post(path, { since: new Date(Date.now() - 3_600_000).toISOString().slice(0, 16) });
      assert.equal(res.status, 403, path);
    }
    assert.deepEqual(await snapshot(), before);
  });

  test('redelivering while disabled, or while an attempt is in flight, says so on the subscription page and the call page', async () => {
    const hook = await subscribeHook(t, mine, { hookUrl: 'https://127.0.0.1:9/busy' });
    const call = await completeCall(t, mine.member);
    const [delivery] = await deliveriesOf(t, hook.id);
    const agent = await signedInAgent(t.url, mine.member.email);
    const csrf = await csrfToken(agent);
    const redeliver = `/ui/webhooks/${hook.id}/deliveries/${delivery!.id}/redeliver`;
    const fromCall = `/ui/calls/${call.id}/deliveries/${delivery!.id}/redeliver`;

    // A worker holds the delivery's lease: an attempt is on the wire.
    await t.db.pool.query(
      `INSERT INTO webhook_delivery_leases (delivery_id, organization_id, subscription_id, token, attempt, started_at, expires_at)
       SELECT id, organization_id, subscription_id, gen_random_uuid(), attempts + 1, now(), now() + interval '1 minute'
         FROM webhook_deliveries WHERE id = $1`,
      [delivery!.id],
    );
    const busy = await agent.post(redeliver, { csrf });
    assert.equal(busy.status, 303);
    assert.equal(busy.location, `/ui/webhooks/${hook.id}?problem=in_flight`);
    assert.match((await agent.get(busy.location!)).body, /being sent right now/);
    const busyFromCall = await agent.post(fromCall, { csrf });
    assert.equal(busyFromCall.location, `/ui/calls/${call.id}?problem=in_flight`);
    assert.match((await agent.get(busyFromCall.location!)).body, /<p class="error" role="alert">That delivery is being sent right now/);

    await t.db.pool.query('DELETE FROM webhook_delivery_leases WHERE delivery_id = $1', [delivery!.id]);
    await t.db.pool.query("UPDATE webhook_subscriptions SET status = 'disabled', disabled_at = now() WHERE id = $1", [hook.id]);
    const disabled = await agent.post(redeliver, { csrf });
    assert.equal(disabled.location, `/ui/webhooks/${hook.id}?problem=disabled`);
    assert.match((await agent.get(disabled.location!)).body, /re-enable it first/);
    const disabledFromCall = await agent.post(fromCall, { csrf });
    assert.equal(disabledFromCall.location, `/ui/calls/${call.id}?problem=disabled`);
    assert.match(
      (await agent.get(disabledFromCall.location!)).body,
      /<p class="error" role="alert">The subscription is disabled: re-enable it first/,
    );
  });

  test('a delivery not attempted yet is listed on its subscription page and its call page, and says why it cannot be redelivered', async () => {
    const hook = await subscribeHook(t, mine, { hookUrl: 'https://127.0.0.1:9/waiting' });
    const call = await completeCall(t, mine.member);
    const [delivery] = await deliveriesOf(t, hook.id);
    const agent = await signedInAgent(t.url, mine.member.email);
    const group = async () => {
      const page = await agent.get(`/ui/webhooks/${hook.id}`);
      const groups = page.body.match(/<tbody class="delivery">[\s\S]*?<\/tbody>/g) ?? [];
      assert.equal(groups.length, 1, 'the one delivery, though it has no attempt yet');
      assert.ok(groups[0]!.includes(`href="/ui/calls/${call.id}"`));
      return groups[0]!.replace(/\s+/g, ' ');
    };
    assert.match(await group(), /Waiting<\/span> <br><span class="muted">0 attempts · first attempt at [\d-]+ [\d:]+ UTC<\/span>/);
    assert.match(await group(), new RegExp(`action="/ui/webhooks/${hook.id}/deliveries/${delivery!.id}/redeliver"`));
    const callPage = (await agent.get(`/ui/calls/${call.id}`)).body.replace(/\s+/g, ' ');
    assert.match(
      callPage,
      new RegExp(
        `<a href="/ui/webhooks/${hook.id}">https://127.0.0.1:9/waiting</a>.*Waiting</span><br><span class="muted">first attempt at `,
      ),
    );

    await t.db.pool.query(
      `INSERT INTO webhook_delivery_leases (delivery_id, organization_id, subscription_id, token, attempt, started_at, expires_at)
       SELECT id, organization_id, subscription_id, gen_random_uuid(), attempts + 1, now(), now() + interval '1 minute'
         FROM webhook_deliveries WHERE id = $1`,
      [delivery!.id],
    );
    assert.match(
      await group(),
      /Sending now<\/span> <br><span class="muted">1 attempt<\/span>.*<p class="muted cannot">Can&#39;t redeliver yet: it is being sent right now\. Reload in a moment\.<\/p>/,
    );
    assert.doesNotMatch(await group(), />Redeliver</);

    await t.db.pool.query('DELETE FROM webhook_delivery_leases WHERE delivery_id = $1', [delivery!.id]);
    await t.db.pool.query(
      "UPDATE webhook_subscriptions SET status = 'disabled', disabled_at = now(), disabled_reason = 'delivery_failures' WHERE id = $1",
      [hook.id],
    );
    assert.match(
      await group(),
      /Paused<\/span> <br><span class="muted">0 attempts · paused while the subscription is disabled<\/span>.*Can(&#39;|')t redeliver: the subscription is disabled; re-enable it first\./,
    );
  });

  test("a subscription's page lists 20 deliveries a page, the one attempted most recently first, each on one page only", async () => {
    const hook = await subscribeHook(t, mine, { hookUrl: 'https://127.0.0.1:9/paged' });
    for (let i = 0; i < 21; i++) await completeCall(t, mine.member);
    const deliveries = await deliveriesOf(t, hook.id);
    // Attempt 1 of each a minute apart, oldest delivery first; the oldest delivery's retry is the newest attempt of all.
    await t.db.pool.query(
      `INSERT INTO webhook_attempts (organization_id, delivery_id, subscription_id, attempt, attempted_at, status_code, latency_ms, outcome)
       SELECT d.organization_id, d.id, d.subscription_id, 1, now() - make_interval(mins => 60 - n::int), 503, 5, 'retrying'
         FROM unnest($1::uuid[]) WITH ORDINALITY AS u(id, n) JOIN webhook_deliveries d ON d.id = u.id
       UNION ALL
       SELECT d.organization_id, d.id, d.subscription_id, 2, now(), 503, 5, 'retrying' FROM webhook_deliveries d WHERE d.id = $2`,
      [deliveries.map((d) => d.id), deliveries[0]!.id],
    );
    await t.db.pool.query(
      'UPDATE webhook_deliveries d SET attempts = (SELECT count(*) FROM webhook_attempts a WHERE a.delivery_id = d.id) WHERE d.subscription_id = $1',
      [hook.id],
    );
    const agent = await signedInAgent(t.url, mine.member.email);
    const shown = (body: string) =>
      [...body.matchAll(/<tbody class="delivery">\s*<tr class="delivery-head">[\s\S]*?href="\/ui\/calls\/([\w-]+)"/g)].map((m) => m[1]!);
    const first = await agent.get(`/ui/webhooks/${hook.id}`);
    const byCall = new Map(deliveries.map((d) => [d.call_id, d]));
    const firstPage = shown(first.body);
    assert.equal(firstPage.length, 20);
    assert.equal(byCall.get(firstPage[0]!)!.id, deliveries[0]!.id, 'the delivery retried last comes first');
    assert.equal(byCall.get(firstPage[1]!)!.id, deliveries[20]!.id);
    const older = /<a href="([^"]+)">Older deliveries<\/a>/.exec(first.body)![1]!.replace(/&amp;/g, '&');
    const secondPage = shown((await agent.get(older)).body);
    assert.deepEqual(
      secondPage.map((c) => byCall.get(c)!.id),
      [deliveries[1]!.id],
    );
    assert.equal(new Set([...firstPage, ...secondPage]).size, 21, 'every delivery once');
  });

  test('texts from the URL are never shown: unknown notice codes show nothing', async () => {
    const hook = await subscribeHook(t, mine, { hookUrl: 'https://127.0.0.1:9/notice' });
    const agent = await signedInAgent(t.url, mine.member.email);
    for (const query of ['done=<b>hi</b>', 'problem=constructor', 'done=__proto__', 'done=toString']) {
      const res = await agent.get(`/ui/webhooks/${hook.id}?${query}`);
      assert.equal(res.status, 200, query);
      assert.doesNotMatch(res.body, /class="notice"|role="alert"/, query);
    }
  });
});
