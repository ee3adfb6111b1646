// Attempt outcomes recorded while their subscription (and with it the
// delivery, by cascade) is deleted: the worker's recordOutcomes reads the
// delivery, then logs the attempt, whose foreign key needs the delivery still
// there. An attempt that finishes after its delivery or subscription is gone
// is dropped quietly (debug, counted), never retried, and never costs the
// other outcomes of its batch their record.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import {
  assertNo5xx,
  assertNoErrorLogs,
  assertRaced,
  counterTotal,
  pause,
  postCompletedCalls,
  race,
  waitForBlockedBy,
  withRaceRig,
} from '../helpers/races.ts';
import {
  answeredOutcome,
  claimDueDeliveries,
  completeCall,
  connectPlatform,
  startWebhookApp,
  subscribeHook,
  waitFor,
  type Connection,
} from '../helpers/webhooks.ts';
import { writeOutcomes } from '../../src/webhooks/worker/recorder.ts';

describe('attempt outcomes while their subscriptions are deleted', () => {
  let t: TestApp;

  before(async () => {
    t = await startWebhookApp();
  });
  after(() => t.close());

  test('an outcome whose subscription was deleted is dropped; the rest of its batch is recorded', async () => {
    const org = await connectPlatform(t);
    const going = await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/going' });
    const staying = await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/staying' });
    await completeCall(t, org.member);
    const claimed = await claimDueDeliveries(t.db.pool, { limit: 10, leaseMs: 60_000 });
    assert.equal(claimed.length, 2);
    await t.db.pool.query('DELETE FROM webhook_subscriptions WHERE id = $1', [going.id]);
    const recorded = await writeOutcomes(
      t.db.pool,
      claimed.map((c) => answeredOutcome(c, 500)),
    );
    const bySubscription = new Map(claimed.map((c, i) => [c.subscription_id, recorded[i]!]));
    assert.deepEqual(bySubscription.get(going.id), {
      deliveryId: claimed.find((c) => c.subscription_id === going.id)!.id,
      held: false,
      subscriptionId: null,
      disabledNow: false,
      circuitRetryAt: null,
      dropped: true,
    });
    assert.equal(bySubscription.get(staying.id)!.held, true);
    assert.equal(bySubscription.get(staying.id)!.dropped, false);
    const { rows } = await t.db.pool.query('SELECT subscription_id, outcome FROM webhook_attempts WHERE subscription_id = ANY ($1)', [
      [going.id, staying.id],
    ]);
    assert.deepEqual(rows, [{ subscription_id: staying.id, outcome: 'retrying' }]);
  });

  test('an outcome recorded while its subscription is being deleted waits for the deletion, then is dropped', async () => {
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/being-deleted' });
    await completeCall(t, org.member);
    await completeCall(t, org.member);
    const claimed = await claimDueDeliveries(t.db.pool, { limit: 10, leaseMs: 60_000 });
    assert.equal(claimed.length, 2);
    const deleting = await t.db.pool.connect();
    try {
      await deleting.query('BEGIN');
      const { rows } = await deleting.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await deleting.query('DELETE FROM webhook_subscriptions WHERE id = $1', [hook.id]);
      // Failures lock the subscription to mark its failing streak: read without
      // a lock of its own first, the record updated the deliveries and then
      // waited for the subscription, which the deletion held while waiting for
      // those deliveries (a deadlock), or logged attempts of deleted deliveries.
      let settled = false;
      const recording = writeOutcomes(
        t.db.pool,
        claimed.map((c) => answeredOutcome(c, 500)),
        { deadlineMs: 60_000 },
      ).finally(() => (settled = true));
      // The record's statement waits, in PostgreSQL, for a lock the deletion holds.
      await waitForBlockedBy(t.db.pool, rows[0]!.pid);
      assert.equal(settled, false, 'the record waits for the deletion');
      await deleting.query('COMMIT');
      const recorded = await recording;
      assert.deepEqual(
        recorded.map((r) => r.dropped),
        [true, true],
      );
    } finally {
      deleting.release();
    }
  });

  test('the worker delivers while the platform unsubscribes and subscribes again, and calls keep completing', (ctx) =>
    withRaceRig(
      {
        // Every fourth answer a 500: failures lock the subscription for their failing streak.
        respond: (_request, index) => ({ status: index % 4 === 3 ? 500 : 200, delayMs: index % 7 }),
      },
      async ({ t: app, target }) => {
        const org: Connection = await connectPlatform(app, { scopes: ['calls:read', 'calls:write'] });
        const hookUrl = `${target.url}/comes-and-goes`;
        const rounds = await race(
          { rounds: 300, maxMs: 5000 },
          async (round) => {
            await subscribeHook(app, org, { hookUrl });
            await pause(round % 11);
            const res = await app.app.inject({ method: 'DELETE', url: '/webhooks/subscribe', headers: org.headers, payload: { hookUrl } });
            assertNo5xx('DELETE /webhooks/subscribe', res);
            assert.equal(res.statusCode, 200, res.body);
          },
          (round) => postCompletedCalls(app, org.headers, round, 4),
        );
        assertRaced(rounds);
        // Nothing stays leased: every attempt's outcome is recorded or dropped.
        await waitFor(
          'no delivery left leased',
          async () => (await app.db.pool.query('SELECT 1 FROM webhook_delivery_leases')).rowCount === 0,
          30_000,
        );
        const dropped = await counterTotal(app.app.metrics.registry, 'switchboard_webhook_outcomes_dropped_total');
        // Counted as recorded (the attempts' rows went with their subscriptions).
        const recorded = await counterTotal(app.app.metrics.registry, 'switchboard_webhook_delivery_attempts_total');
        ctx.diagnostic(
          `rounds: ${rounds.join(', ')}; requests: ${target.requests.length}; outcomes recorded: ${recorded}, dropped: ${dropped}`,
        );
        // The race happened: the worker claimed and sent deliveries, recorded outcomes, and dropped some whose subscription had gone.
        assert.ok(target.requests.length > 0, 'the worker sent deliveries');
        assert.ok(recorded > 0, 'outcomes were recorded');
        assert.ok(dropped > 0, 'outcomes of deliveries whose subscription was deleted meanwhile were dropped');
        assertNoErrorLogs(app.logs);
      },
    ));
});
