// WEBHOOK_MAX_SUBSCRIPTIONS: an organization's active subscriptions, every
// app's together, stop at the limit. A new URL past it is 409
// WEBHOOK_SUBSCRIPTION_LIMIT naming the limit; a URL already subscribed
// answers as always; removing one makes room; GET /webhooks and the Webhooks
// page say how much is used; two subscribes racing for the last place, each
// through its own server, never both win (each round proves they overlapped:
// both wait for the organization's lock at once before either may count).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember } from '../helpers/fixtures.ts';
import { throughGate } from '../helpers/lock-waits.ts';
import { csrfToken, signedInAgent } from '../helpers/web.ts';
import { connectPlatform, WEBHOOK_TEST_ENV, type Connection } from '../helpers/webhooks.ts';

const LIMIT = 3;
const ENV = { ...WEBHOOK_TEST_ENV, WEBHOOK_MAX_SUBSCRIPTIONS: String(LIMIT) };

describe('WEBHOOK_MAX_SUBSCRIPTIONS', () => {
  let t: TestApp;
  let other: TestApp;
  before(async () => {
    t = await startTestApp({ listen: true, env: ENV });
    // A second server on the same database, as a second API process would be.
    other = await startTestApp({ db: t.db, env: ENV });
  });
  after(async () => {
    await other.close();
    await t.close();
  });

  const subscribe = (connection: Connection, hookUrl: string, app = t) =>
    app.app.inject({ method: 'POST', url: '/webhooks/subscribe', headers: connection.headers, payload: { hookUrl } });
  const unsubscribe = (connection: Connection, hookUrl: string) =>
    t.app.inject({ method: 'DELETE', url: '/webhooks/subscribe', headers: connection.headers, payload: { hookUrl } });
  const list = (headers: Record<string, string>) => t.app.inject({ url: '/webhooks', headers });
  const activeIn = async (organizationId: string) =>
    (
      await t.db.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM webhook_subscriptions WHERE organization_id = $1 AND status = 'active'",
        [organizationId],
      )
    ).rows[0]!.n;

  /** Two apps of one organization. */
  async function twoApps(): Promise<[Connection, Connection]> {
    const first = await connectPlatform(t);
    const second = await connectPlatform(t, { member: await createMember(t.db.pool, { org: first.member.org, role: 'member' }) });
    return [first, second];
  }

  test('past the limit a new URL is 409 naming the limit, whichever app asks; a URL already subscribed answers 200; removing one makes room', async () => {
    const [a, b] = await twoApps();
    assert.equal((await subscribe(a, 'https://127.0.0.1:9/a1')).statusCode, 201);
    assert.equal((await subscribe(a, 'https://127.0.0.1:9/a2')).statusCode, 201);
    const b1 = await subscribe(b, 'https://127.0.0.1:9/b1');
    assert.equal(b1.statusCode, 201);

    for (const [connection, url] of [
      [a, 'https://127.0.0.1:9/a3'],
      [b, 'https://127.0.0.1:9/b2'],
    ] as const) {
      const refused = await subscribe(connection, url);
      assert.equal(refused.statusCode, 409, refused.body);
      assert.match(String(refused.headers['content-type']), /^application\/problem\+json/);
      const problem = refused.json();
      assert.equal(problem.code, 'WEBHOOK_SUBSCRIPTION_LIMIT');
      assert.equal(problem.type, '/problems/webhook-subscription-limit');
      assert.match(problem.detail, new RegExp(`\\b${LIMIT} active webhook subscriptions\\b`));
    }
    assert.equal(await activeIn(a.member.org.id), LIMIT, 'nothing was added');

    // At the limit, a URL already subscribed is answered as always.
    const again = await subscribe(b, 'https://127.0.0.1:9/b1');
    assert.equal(again.statusCode, 200);
    assert.deepEqual(again.json(), b1.json());
    // Another organization has its own limit.
    assert.equal((await subscribe(await connectPlatform(t), 'https://127.0.0.1:9/a3')).statusCode, 201);

    // An unsubscribe makes room, and so does a deletion.
    assert.equal((await unsubscribe(a, 'https://127.0.0.1:9/a1')).statusCode, 200);
    assert.equal((await subscribe(b, 'https://127.0.0.1:9/b2')).statusCode, 201);
    assert.equal((await subscribe(a, 'https://127.0.0.1:9/a3')).statusCode, 409);
    const deleted = await t.app.inject({ method: 'DELETE', url: `/webhooks/${b1.json().id}`, headers: { 'x-user-token': a.member.token } });
    assert.equal(deleted.statusCode, 204);
    assert.equal((await subscribe(a, 'https://127.0.0.1:9/a3')).statusCode, 201);
    assert.equal(await activeIn(a.member.org.id), LIMIT);
  });

  test('GET /webhooks stays a plain array and says how much of the limit is used in Subscription-Count and Subscription-Limit', async () => {
    const [a, b] = await twoApps();
    await subscribe(a, 'https://127.0.0.1:9/one');
    await subscribe(b, 'https://127.0.0.1:9/two');
    const asUser = await list({ 'x-user-token': a.member.token });
    assert.equal(asUser.statusCode, 200);
    assert.ok(Array.isArray(asUser.json()));
    assert.equal(asUser.json().length, 2);
    assert.equal(asUser.headers['subscription-count'], '2');
    assert.equal(asUser.headers['subscription-limit'], String(LIMIT));
    // An app lists its own subscriptions; the count is the organization's, which its next subscribe is held to.
    const asApp = await list(a.headers);
    assert.deepEqual(
      asApp.json().map((s: { callback_url: string }) => s.callback_url),
      ['https://127.0.0.1:9/one'],
    );
    assert.equal(asApp.headers['subscription-count'], '2');
    assert.equal(asApp.headers['subscription-limit'], String(LIMIT));
    // The API reference says so, and lists the 409.
    const paths = (await t.app.inject({ url: '/openapi.json' })).json().paths;
    assert.deepEqual(Object.keys(paths['/webhooks'].get.responses['200'].headers).sort(), ['Subscription-Count', 'Subscription-Limit']);
    assert.match(paths['/webhooks/subscribe'].post.responses['409'].description, /WEBHOOK_SUBSCRIPTION_LIMIT/);
  });

  test('a disabled subscription does not count; re-enabling it past the limit is 409, in the API and on its page', async () => {
    const [a] = await twoApps();
    const failed = (await subscribe(a, 'https://127.0.0.1:9/failed')).json();
    await t.db.pool.query(
      "UPDATE webhook_subscriptions SET status = 'disabled', disabled_at = now(), disabled_reason = 'delivery_failures' WHERE id = $1",
      [failed.id],
    );
    for (const path of ['/x', '/y', '/z']) assert.equal((await subscribe(a, `https://127.0.0.1:9${path}`)).statusCode, 201, path);
    const user = { 'x-user-token': a.member.token };
    const refused = await t.app.inject({ method: 'POST', url: `/webhooks/${failed.id}/enable`, headers: user });
    assert.equal(refused.statusCode, 409);
    assert.equal(refused.json().code, 'WEBHOOK_SUBSCRIPTION_LIMIT');
    assert.equal(await activeIn(a.member.org.id), LIMIT);

    const agent = await signedInAgent(t.url, a.member.email);
    const page = await agent.post(`/ui/webhooks/${failed.id}/enable`, { csrf: await csrfToken(agent) });
    assert.equal(page.status, 303);
    assert.equal(page.location, `/ui/webhooks/${failed.id}?problem=limit`);
    assert.match((await agent.get(page.location)).body, /as many active subscriptions as it may/);

    // Subscribing its URL again would make it active again: refused too.
    assert.equal((await subscribe(a, 'https://127.0.0.1:9/failed')).statusCode, 409);
    assert.equal((await unsubscribe(a, 'https://127.0.0.1:9/z')).statusCode, 200);
    const enabled = await t.app.inject({ method: 'POST', url: `/webhooks/${failed.id}/enable`, headers: user });
    assert.equal(enabled.statusCode, 200);
    assert.equal(enabled.json().status, 'active');
  });

  test('the Webhooks page shows how much of the limit is used', async () => {
    const [a, b] = await twoApps();
    const agent = await signedInAgent(t.url, a.member.email);
    assert.match((await agent.get('/ui/webhooks')).body, new RegExp(`0 of ${LIMIT} active subscriptions used\\.`));
    await subscribe(a, 'https://127.0.0.1:9/p1');
    await subscribe(b, 'https://127.0.0.1:9/p2');
    assert.match((await agent.get('/ui/webhooks')).body, new RegExp(`2 of ${LIMIT} active subscriptions used\\.`));
    await subscribe(b, 'https://127.0.0.1:9/p3');
    assert.match((await agent.get('/ui/webhooks')).body, new RegExp(`3 of ${LIMIT} active subscriptions used: the limit is reached`));
  });

  test('two subscribes racing for the last place, each through its own server, never both win (many rounds)', async () => {
    const ROUNDS = 40;
    for (let round = 0; round < ROUNDS; round++) {
      const [a, b] = await twoApps();
      for (let i = 1; i < LIMIT; i++) assert.equal((await subscribe(a, `https://127.0.0.1:9/held-${i}`)).statusCode, 201);
      // Let go together once both wait for the lock that serialises adding subscriptions (lockActiveSubscriptions).
      const answers = await throughGate(
        t.db.pool,
        { lock: "SELECT app_lock('active_subscriptions', $1::uuid)", params: [a.member.org.id] },
        [() => subscribe(a, `https://127.0.0.1:9/race-a-${round}`, t), () => subscribe(b, `https://127.0.0.1:9/race-b-${round}`, other)],
      );
      assert.deepEqual(
        answers.map((r) => r.statusCode).sort(),
        [201, 409],
        `round ${round}: ${answers.map((r) => `${r.statusCode} ${r.body}`).join(' | ')}`,
      );
      assert.equal(await activeIn(a.member.org.id), LIMIT, `round ${round}`);
    }
    for (const app of [t, other]) {
      assert.ok(
        !app.logs.some((line) => /"level":(50|60)/.test(line)),
        app.logs.find((line) => /"level":(50|60)/.test(line)),
      );
    }
  });
});
