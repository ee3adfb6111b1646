// POST /calls while the organization's webhook subscriptions come and go: the
// outbox insert reads the active subscriptions and writes one delivery per
// subscription in the same statement, while unsubscribe and DELETE
// /webhooks/{id} remove them, and the worker delivers. A call is stored
// whatever they do meanwhile; a subscription that stayed gets a delivery for
// every call; no deadlock.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { assertNo5xx, assertNoErrorLogs, assertRaced, postCompletedCalls, race, withRaceRig } from '../helpers/races.ts';
import { connectPlatform, subscribeHook, type Connection } from '../helpers/webhooks.ts';

describe('completed calls while subscriptions come and go', () => {
  let t: TestApp;
  let org: Connection;
  let stayingId: string;
  /** An app with its worker delivering to a receiver; the organization's hook that stays subscribed throughout. */
  const racing = (body: (hookBase: string) => Promise<void>) =>
    withRaceRig({}, async (rig) => {
      t = rig.t;
      org = await connectPlatform(t, { scopes: ['calls:read', 'calls:write'] });
      stayingId = (await subscribeHook(t, org, { hookUrl: `${rig.target.url}/stays` })).id;
      await body(rig.target.url);
    });

  /** Eight completed calls at once, all answered 201, their ids kept in `calls`. */
  async function completeEight(round: number, calls: string[]) {
    calls.push(...(await postCompletedCalls(t, org.headers, round, 8)));
  }

  async function assertStoredWithDeliveries(calls: string[]) {
    const { rows: stored } = await t.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM calls WHERE id = ANY ($1)', [calls]);
    assert.equal(stored[0]!.n, calls.length, 'every call answered 201 is stored');
    const { rows: delivered } = await t.db.pool.query<{ n: number }>(
      'SELECT count(DISTINCT call_id)::int AS n FROM webhook_deliveries WHERE subscription_id = $1 AND call_id = ANY ($2)',
      [stayingId, calls],
    );
    assert.equal(delivered[0]!.n, calls.length, 'the subscription that stayed has a delivery for every call');
  }

  test('the platform subscribes and unsubscribes a hook while calls complete', (ctx) =>
    racing(async (hookBase) => {
      const calls: string[] = [];
      const hookUrl = `${hookBase}/comes-and-goes`;
      const rounds = await race(
        { rounds: 400, maxMs: 5000 },
        async (round) => {
          await subscribeHook(t, org, { hookUrl, secret: `s${round}` });
          const res = await t.app.inject({ method: 'DELETE', url: '/webhooks/subscribe', headers: org.headers, payload: { hookUrl } });
          assertNo5xx('DELETE /webhooks/subscribe', res);
          assert.equal(res.statusCode, 200, res.body);
        },
        (round) => completeEight(round, calls),
      );
      ctx.diagnostic(`rounds: ${rounds.join(', ')}`);
      assertRaced(rounds);
      await assertStoredWithDeliveries(calls);
      assertNoErrorLogs(t.logs);
    }));

  test('an organization user deletes subscriptions by id while calls complete', (ctx) =>
    racing(async (hookBase) => {
      const calls: string[] = [];
      const rounds = await race(
        { rounds: 400, maxMs: 5000 },
        async (round) => {
          const { id } = await subscribeHook(t, org, { hookUrl: `${hookBase}/by-id-${round % 3}` });
          const res = await t.app.inject({ method: 'DELETE', url: `/webhooks/${id}`, headers: { 'x-user-token': org.member.token } });
          assertNo5xx('DELETE /webhooks/{id}', res);
          assert.equal(res.statusCode, 204, res.body);
        },
        (round) => completeEight(round, calls),
      );
      ctx.diagnostic(`rounds: ${rounds.join(', ')}`);
      assertRaced(rounds);
      await assertStoredWithDeliveries(calls);
      assertNoErrorLogs(t.logs);
    }));
});
