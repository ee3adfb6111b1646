// WEBHOOK_MAX_SUBSCRIPTIONS beside what else changes an organization's
// active subscriptions: a re-enable racing a subscribe for the last place
// (each round proves both waited for the organization's lock at once, then
// exactly one wins), and the place the worker frees when it disables a
// subscription after five days of failures.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { startHttpsTarget, type HttpsTarget } from '../helpers/https-target.ts';
import { throughGate } from '../helpers/lock-waits.ts';
import { completeCall, connectPlatform, startTestWorker, waitFor, WEBHOOK_TEST_ENV, type Connection } from '../helpers/webhooks.ts';

const LIMIT = 3;
const ENV = { ...WEBHOOK_TEST_ENV, WEBHOOK_MAX_SUBSCRIPTIONS: String(LIMIT) };

describe('WEBHOOK_MAX_SUBSCRIPTIONS with re-enables and the worker', () => {
  let t: TestApp;
  let other: TestApp;
  let target: HttpsTarget;
  before(async () => {
    t = await startTestApp({ env: ENV });
    // A second server on the same database, as a second API process would be.
    other = await startTestApp({ db: t.db, env: ENV });
    target = await startHttpsTarget(() => ({ status: 500 }));
  });
  after(async () => {
    await target.close();
    await other.close();
    await t.close();
  });

  const subscribe = (connection: Connection, hookUrl: string, app = t) =>
    app.app.inject({ method: 'POST', url: '/webhooks/subscribe', headers: connection.headers, payload: { hookUrl } });
  const activeIn = async (organizationId: string) =>
    (
      await t.db.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM webhook_subscriptions WHERE organization_id = $1 AND status = 'active'",
        [organizationId],
      )
    ).rows[0]!.n;
  const disable = (id: string) =>
    t.db.pool.query(
      "UPDATE webhook_subscriptions SET status = 'disabled', disabled_at = now(), disabled_reason = 'delivery_failures' WHERE id = $1",
      [id],
    );

  test('a re-enable and a subscribe racing for the last place, each through its own server: exactly one wins (many rounds)', async () => {
    const ROUNDS = 15;
    const winners = { enable: 0, subscribe: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const a = await connectPlatform(t);
      const disabled = (await subscribe(a, `https://127.0.0.1:9/disabled-${round}`)).json();
      await disable(disabled.id);
      for (let i = 1; i < LIMIT; i++) assert.equal((await subscribe(a, `https://127.0.0.1:9/held-${i}`)).statusCode, 201);
      // Both sides are let go together once both wait for the lock that serialises adding subscriptions.
      const [enabled, subscribed] = await throughGate(
        t.db.pool,
        { lock: "SELECT app_lock('active_subscriptions', $1::uuid)", params: [a.member.org.id] },
        [
          () => t.app.inject({ method: 'POST', url: `/webhooks/${disabled.id}/enable`, headers: { 'x-user-token': a.member.token } }),
          () => subscribe(a, `https://127.0.0.1:9/race-${round}`, other),
        ],
      );
      const outcome = [enabled.statusCode, subscribed.statusCode];
      assert.ok(
        (outcome[0] === 200 && outcome[1] === 409) || (outcome[0] === 409 && outcome[1] === 201),
        `round ${round}: exactly one wins, got enable ${enabled.statusCode} ${enabled.body} | subscribe ${subscribed.statusCode} ${subscribed.body}`,
      );
      const loser = outcome[0] === 409 ? enabled : subscribed;
      assert.equal(loser.json().code, 'WEBHOOK_SUBSCRIPTION_LIMIT');
      winners[outcome[0] === 200 ? 'enable' : 'subscribe'] += 1;
      assert.equal(await activeIn(a.member.org.id), LIMIT, `round ${round}`);
    }
    for (const app of [t, other]) {
      const errorLine = app.logs.find((line) => /"level":(50|60)/.test(line));
      assert.equal(errorLine, undefined);
    }
    assert.equal(winners.enable + winners.subscribe, ROUNDS);
  });

  test('at the limit, the worker disabling a subscription after five days of failures makes room for a new one', async () => {
    const a = await connectPlatform(t);
    const failing = (await subscribe(a, `${target.url}/failing`)).json();
    for (let i = 1; i < LIMIT; i++) assert.equal((await subscribe(a, `https://127.0.0.1:9/kept-${i}`)).statusCode, 201);
    assert.equal((await subscribe(a, 'https://127.0.0.1:9/new')).statusCode, 409, 'at the limit');
    // Failing for five days already: the worker's next failed attempt disables it.
    await t.db.pool.query("UPDATE webhook_subscriptions SET failing_since = now() - interval '5 days 1 minute' WHERE id = $1", [
      failing.id,
    ]);
    const worker = await startTestWorker(t);
    try {
      await completeCall(t, a.member);
      await waitFor(
        'the worker to disable the failing subscription',
        async () =>
          (
            await t.db.pool.query<{ status: string; disabled_reason: string | null }>(
              'SELECT status, disabled_reason FROM webhook_subscriptions WHERE id = $1',
              [failing.id],
            )
          ).rows[0]!.disabled_reason === 'delivery_failures',
        20_000,
      );
    } finally {
      await worker.stop();
    }
    assert.equal(await activeIn(a.member.org.id), LIMIT - 1);
    const added = await subscribe(a, 'https://127.0.0.1:9/new');
    assert.equal(added.statusCode, 201, added.body);
    assert.equal(await activeIn(a.member.org.id), LIMIT);
  });
});
