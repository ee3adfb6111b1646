// A stopping worker's hand-back (handBackLeases) against the statements that
// write the same deliveries: the outcome record of attempts that finished just
// as the drain ended (the same worker's), and the deletion of their
// subscription. Each writes several deliveries in one statement; taken in
// different orders, two of them deadlock (PostgreSQL aborts one). They take
// rows in one order (docs/delivery-engine.md, "Locks"): subscriptions first,
// and the hand-back leaves a delivery another statement is writing to it.
// Every round proves the statements overlapped: the test holds a subscription
// they all need until each waits for it in PostgreSQL (throughGate), so none
// had finished before the others began.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { throughGate } from '../helpers/lock-waits.ts';
import { assertNo5xx, pause } from '../helpers/races.ts';
import { answeredOutcome, claimDueDeliveries, completeCall, connectPlatform, startWebhookApp, subscribeHook } from '../helpers/webhooks.ts';
import { handBackLeases } from '../../src/webhooks/worker/hand-back.queries.ts';
import { writeOutcomes } from '../../src/webhooks/worker/recorder.ts';

/** At most this many deliveries of one subscription are leased at once (the per-subscription cap). */
const PER_SUBSCRIPTION = 10;
/** Subscriptions whose attempts are handed back together in each round. */
const SUBSCRIPTIONS = 4;
const LEASED = PER_SUBSCRIPTION * SUBSCRIPTIONS;

function shuffled<T>(items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

describe('the hand-back beside the statements that write the same deliveries', () => {
  let t: TestApp;
  before(async () => {
    t = await startWebhookApp();
  });
  after(() => t.close());

  test('the outcome record of the same attempts: no deadlock; each attempt is either handed back or recorded, never both', async (ctx) => {
    const org = await connectPlatform(t);
    const hooks = [];
    for (let i = 0; i < SUBSCRIPTIONS; i++) hooks.push(await subscribeHook(t, org, { hookUrl: `https://127.0.0.1:9/recorded-${i}` }));
    const ids = hooks.map((h) => h.id);
    for (let i = 0; i < PER_SUBSCRIPTION; i++) await completeCall(t, org.member, { summary: `call ${i}` });
    let mixed = 0;
    let rounds = 0;
    const started = Date.now();
    // At least 20 rounds, up to 100 within 6 s, then on until some round splits, for up to a minute: on a machine
    // loaded well past its cores one statement often finishes before the other is scheduled (once, 0 splits in 100).
    const elapsed = () => Date.now() - started;
    while (rounds < 20 || (rounds < 100 && elapsed() < 6000) || (mixed === 0 && elapsed() < 60_000)) {
      rounds++;
      // Every delivery due again (fixture): the next claim leases all of them.
      await t.db.pool.query(
        "UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now(), finished_at = NULL WHERE subscription_id = ANY ($1::uuid[])",
        [ids],
      );
      const claimed = await claimDueDeliveries(t.db.pool, { limit: LEASED, leaseMs: 60_000 });
      assert.equal(claimed.length, LEASED);
      // Both wait for the subscriptions (the first rows each takes), then meet on the deliveries in any order.
      const [handed, recorded] = await throughGate(
        t.db.pool,
        { lock: 'SELECT 1 FROM webhook_subscriptions WHERE id = ANY ($1::uuid[]) FOR UPDATE', params: [ids] },
        [
          () =>
            handBackLeases(
              t.db.pool,
              shuffled(claimed).map((c) => ({ id: c.id, leaseToken: c.lease_token })),
            ),
          () =>
            writeOutcomes(
              t.db.pool,
              shuffled(claimed).map((c) => answeredOutcome(c, 200)),
            ),
        ],
      );
      const held = new Set(recorded.filter((r) => r.held).map((r) => r.deliveryId));
      for (const c of claimed) {
        assert.ok(
          handed.includes(c.id) !== held.has(c.id),
          `delivery ${c.id}: handed back ${handed.includes(c.id)}, recorded ${held.has(c.id)}`,
        );
      }
      if (handed.length > 0 && held.size > 0) mixed++;
      const { rows } = await t.db.pool.query('SELECT 1 FROM webhook_delivery_leases WHERE subscription_id = ANY ($1::uuid[])', [ids]);
      assert.equal(rows.length, 0, 'no lease is left behind');
    }
    // Nothing of these subscriptions is left for the next test's claims.
    await t.db.pool.query('DELETE FROM webhook_subscriptions WHERE id = ANY ($1::uuid[])', [ids]);
    ctx.diagnostic(`rounds: ${rounds}; rounds split between hand-back and record: ${mixed}`);
    assert.ok(mixed > 0, 'in some rounds each statement took some of the attempts');
  });

  test("the deletion of the attempts' subscriptions: no deadlock; the hand-back runs before or after each, never through it", async (ctx) => {
    const org = await connectPlatform(t);
    const calls: { id: string }[] = [];
    for (let i = 0; i < PER_SUBSCRIPTION; i++) calls.push(await completeCall(t, org.member, { summary: `deleted ${i}` }));
    const user = { 'x-user-token': org.member.token };
    const outcomes = { handedBack: 0, deletedFirst: 0 };
    let rounds = 0;
    const started = Date.now();
    // At least 20 rounds, and on until each order was seen, within 100.
    while (rounds < 100 && (rounds < 20 || !outcomes.handedBack || !outcomes.deletedFirst || Date.now() - started < 4000)) {
      const round = rounds++;
      const hooks = [];
      for (let i = 0; i < SUBSCRIPTIONS; i++)
        hooks.push(await subscribeHook(t, org, { hookUrl: `https://127.0.0.1:9/deleted-${round}-${i}` }));
      // Their deliveries (fixture): one for each call made above.
      await t.db.pool.query(
        `INSERT INTO webhook_deliveries (organization_id, subscription_id, call_id, event, body)
         SELECT c.organization_id, s.id, c.id, 'call.completed', '{}'
           FROM calls c, unnest($1::uuid[]) AS s(id) WHERE c.id = ANY ($2::uuid[])`,
        [hooks.map((h) => h.id), calls.map((c) => c.id)],
      );
      const claimed = await claimDueDeliveries(t.db.pool, { limit: LEASED, leaseMs: 60_000 });
      assert.equal(claimed.length, LEASED);
      // The test holds the subscription the hand-back takes last (it goes in id order) until the hand-back
      // and that subscription's deletion both wait for it: the others' deletions meet the hand-back before
      // or after it took their subscription.
      const last = hooks.map((h) => h.id).sort()[SUBSCRIPTIONS - 1];
      const [handed, ...deleted] = await throughGate(
        t.db.pool,
        { lock: 'SELECT 1 FROM webhook_subscriptions WHERE id = $1 FOR UPDATE', params: [last], waiters: 2 },
        [
          // A deletion's request takes longer to reach its statement: the hand-back starts a little later, by a varying amount.
          () =>
            pause(round % 8).then(() =>
              handBackLeases(
                t.db.pool,
                shuffled(claimed).map((c) => ({ id: c.id, leaseToken: c.lease_token })),
              ),
            ),
          ...hooks.map((h) => () => t.app.inject({ method: 'DELETE', url: `/webhooks/${h.id}`, headers: user })),
        ],
      );
      for (const res of deleted) {
        assertNo5xx('DELETE /webhooks/{id}', res);
        assert.equal(res.statusCode, 204, res.body);
      }
      // Each deletion waited for the hand-back or the hand-back for it: a subscription's attempts were all handed back, or none.
      for (const h of hooks) {
        const mine = claimed.filter((c) => c.subscription_id === h.id);
        const back = mine.filter((c) => handed.includes(c.id)).length;
        assert.ok(back === 0 || back === mine.length, `handed back ${back} of the ${mine.length} attempts of one subscription`);
        outcomes[back === 0 ? 'deletedFirst' : 'handedBack']++;
      }
      const { rows } = await t.db.pool.query(
        'SELECT (SELECT count(*) FROM webhook_deliveries WHERE subscription_id = ANY ($1::uuid[]))::int AS deliveries, (SELECT count(*) FROM webhook_delivery_leases WHERE subscription_id = ANY ($1::uuid[]))::int AS leases',
        [hooks.map((h) => h.id)],
      );
      assert.deepEqual(rows[0], { deliveries: 0, leases: 0 }, 'the deletions took the deliveries and their leases');
    }
    ctx.diagnostic(`rounds: ${rounds}; subscriptions handed back first ${outcomes.handedBack}, deleted first ${outcomes.deletedFirst}`);
    assert.ok(
      outcomes.handedBack > 0 && outcomes.deletedFirst > 0,
      'the hand-back came first for some subscriptions, the deletion for others',
    );
  });
});
