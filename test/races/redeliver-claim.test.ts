// Redeliver against the claim: a redelivery is refused while an attempt holds
// the delivery's lease (docs/delivery-engine.md, T10), and that must hold when
// the lease is being committed while the redelivery runs. The claim locks the
// delivery's row without writing it, so a requeue that only tested "no lease"
// in its own snapshot waited for that lock and then requeued a delivery in
// flight: answered 202, and the attempt's outcome then overwrote it.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, before, describe, test } from 'node:test';
import type { Pool } from '../../src/db/pool.ts';
import type { TestApp } from '../helpers/app.ts';
import { assertNo5xx, assertNoErrorLogs, assertRaced, race, waitForLockWait, withRaceRig } from '../helpers/races.ts';
import {
  answeredOutcome,
  claimDueDeliveries,
  completeCall,
  connectPlatform,
  startWebhookApp,
  subscribeHook,
  waitFor,
} from '../helpers/webhooks.ts';
import { writeOutcomes } from '../../src/webhooks/worker/recorder.ts';

describe('a redelivery asked for while a claim is leasing the delivery', () => {
  let t: TestApp;
  before(async () => {
    t = await startWebhookApp();
  });
  after(() => t.close());

  test('waits for the claim to commit and is refused as in flight; once the attempt is recorded, it is accepted', async () => {
    const org = await connectPlatform(t);
    await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/leasing' });
    await completeCall(t, org.member);
    const headers = { 'x-user-token': org.member.token };
    // The claim's own statements on a connection of the test's, its transaction held open after the leasing statement.
    const claim = await t.db.pool.connect();
    let claimed: Awaited<ReturnType<typeof claimDueDeliveries>>;
    try {
      await claim.query('BEGIN');
      claimed = await claimDueDeliveries(claim as unknown as Pool, { limit: 1, leaseMs: 60_000 });
      assert.equal(claimed.length, 1);
      const redelivery = t.app.inject({ method: 'POST', url: `/webhooks/deliveries/${claimed[0]!.id}/redeliver`, headers });
      // It waits for the delivery the claim holds…
      await waitForLockWait(t.db.pool);
      await claim.query('COMMIT');
      // …and then sees the lease the claim committed.
      const refused = await redelivery;
      assert.equal(refused.statusCode, 409, refused.body);
      assert.equal(refused.json().code, 'WEBHOOK_DELIVERY_IN_FLIGHT');
    } finally {
      await claim.query('ROLLBACK').catch(() => {});
      claim.release();
    }
    const [attempt] = claimed;
    const [recorded] = await writeOutcomes(t.db.pool, [answeredOutcome(attempt!, 200)]);
    assert.equal(recorded!.held, true, "the attempt's outcome is recorded under its lease");
    const accepted = await t.app.inject({ method: 'POST', url: `/webhooks/deliveries/${attempt!.id}/redeliver`, headers });
    assert.equal(accepted.statusCode, 202, accepted.body);
    assert.equal(accepted.json().attempts, 1);
    const [again] = await claimDueDeliveries(t.db.pool, { limit: 1, leaseMs: 60_000 });
    assert.equal(again?.id, attempt!.id, 'the redelivery stands: the delivery is due again');
    assert.equal(again!.attempt, 2);
  });
});

describe('redeliveries beside the worker claiming and attempting the same deliveries', () => {
  test('no two attempts of a delivery overlap; every redelivery accepted is attempted after it was asked for', (ctx) => {
    /** Each request the receiver got: its delivery, attempt number, arrival and end (performance.now()). */
    const received: { id: string; attempt: number; at: number; end: number }[] = [];
    return withRaceRig(
      {
        respond: (request, index) => {
          const entry = {
            id: String(request.headers['x-delivery-id']),
            attempt: Number(request.headers['x-delivery-attempt']),
            at: performance.now(),
            end: Number.POSITIVE_INFINITY,
          };
          received.push(entry);
          return new Promise((resolve) =>
            setTimeout(() => {
              entry.end = performance.now();
              resolve({ status: 200 });
            }, index % 4),
          );
        },
      },
      async ({ t, target }) => {
        const org = await connectPlatform(t);
        const hook = await subscribeHook(t, org, { hookUrl: `${target.url}/redelivered` });
        const calls = await Promise.all(Array.from({ length: 6 }, (_, i) => completeCall(t, org.member, { summary: `call ${i}` })));
        const { rows } = await t.db.pool.query<{ id: string }>(
          'SELECT id FROM webhook_deliveries WHERE subscription_id = $1 ORDER BY created_at',
          [hook.id],
        );
        assert.equal(rows.length, calls.length);
        const ids = rows.map((r) => r.id);
        const headers = { 'x-user-token': org.member.token };
        /** Redeliveries answered 202: the delivery, the attempts it had then, and when the request was made. */
        const accepted: { id: string; attempts: number; sent: number }[] = [];
        let refusedInFlight = 0;
        // Each redeliverer asks for every delivery in turn: a 202 wakes the worker, whose claim then
        // leases it while the next redeliverer's request for it runs.
        const redeliverer = (offset: number) => async (round: number) => {
          const id = ids[(round + offset) % ids.length]!;
          const sent = performance.now();
          const res = await t.app.inject({ method: 'POST', url: `/webhooks/deliveries/${id}/redeliver`, headers });
          assertNo5xx('POST /webhooks/deliveries/{id}/redeliver', res);
          if (res.statusCode === 202) accepted.push({ id, attempts: res.json().attempts, sent });
          else {
            assert.equal(res.statusCode, 409, res.body);
            assert.equal(res.json().code, 'WEBHOOK_DELIVERY_IN_FLIGHT');
            refusedInFlight++;
          }
        };
        const rounds = await race({ rounds: 400, maxMs: 5000 }, redeliverer(0), redeliverer(0), redeliverer(3));
        ctx.diagnostic(`rounds: ${rounds.join(', ')}; accepted ${accepted.length}, refused in flight ${refusedInFlight}`);
        assertRaced(rounds);
        // The sides met: some redeliveries found an attempt in flight, and some were accepted.
        assert.ok(refusedInFlight > 0, 'some redeliveries were refused as in flight');
        assert.ok(accepted.length > 0, 'some redeliveries were accepted');
        await waitFor(
          'every delivery settled, no lease left',
          async () =>
            (
              await t.db.pool.query(
                "SELECT 1 FROM webhook_deliveries WHERE subscription_id = $1 AND status = 'pending' UNION ALL SELECT 1 FROM webhook_delivery_leases",
                [hook.id],
              )
            ).rowCount === 0 && target.open === 0,
          15_000,
        );

        for (const id of ids) {
          const attempts = received.filter((r) => r.id === id).sort((a, b) => a.at - b.at);
          for (let i = 1; i < attempts.length; i++) {
            assert.ok(
              attempts[i]!.at >= attempts[i - 1]!.end,
              `delivery ${id}: attempt ${attempts[i]!.attempt} arrived while attempt ${attempts[i - 1]!.attempt} was open`,
            );
          }
        }
        // A redelivery accepted with n attempts made is attempt n + 1, claimed after the requeue committed,
        // so it reaches the receiver after the redelivery was asked for (not an attempt already on its way).
        for (const a of accepted) {
          const next = received.find((r) => r.id === a.id && r.attempt === a.attempts + 1);
          assert.ok(next, `delivery ${a.id}: attempt ${a.attempts + 1} was sent after its redelivery`);
          assert.ok(next.at > a.sent, `delivery ${a.id}: attempt ${a.attempts + 1} was on its way before the redelivery was asked for`);
        }
        const { rows: superseded } = await t.db.pool.query(
          "SELECT delivery_id, attempt FROM webhook_attempts WHERE subscription_id = $1 AND outcome = 'superseded'",
          [hook.id],
        );
        assert.deepEqual(superseded, [], 'no outcome was recorded under a lease a redelivery had overwritten');
        assertNoErrorLogs(t.logs);
      },
    );
  });
});
