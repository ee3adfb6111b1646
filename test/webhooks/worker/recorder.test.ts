import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../../helpers/app.ts';
import {
  answeredOutcome,
  attemptsOf,
  claimDueDeliveries,
  completeCall,
  connectPlatform,
  deliveriesOf,
  startWebhookApp,
  subscribeHook,
} from '../../helpers/webhooks.ts';
import type { Pool } from '../../../src/db/pool.ts';
import type { LeasedDelivery } from '../../../src/webhooks/worker/claim.queries.ts';
import type { OutcomeRecord } from '../../../src/webhooks/worker/record.queries.ts';
import { createOutcomeRecorder, PARALLEL_MIN, writeOutcomes } from '../../../src/webhooks/worker/recorder.ts';

// Outcomes are recorded in batches (no worker loop here: claims and outcomes
// are driven by hand, so a "crash" is simply an outcome never written).
describe('recording attempt outcomes in batches', () => {
  let t: TestApp;

  before(async () => {
    t = await startWebhookApp();
  });
  after(() => t.close());

  /** The app's pool behind a stand-in that counts the statements sent through query(). */
  function countingPool(): { pool: Pool; statements: () => number } {
    let statements = 0;
    const query = (...args: unknown[]) => {
      statements++;
      return (t.db.pool.query as (...a: unknown[]) => unknown).apply(t.db.pool, args);
    };
    return { pool: { query } as unknown as Pool, statements: () => statements };
  }

  async function hookWithCalls(path: string, calls: number) {
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `https://127.0.0.1:9${path}` });
    for (let i = 0; i < calls; i++) await completeCall(t, org.member, { summary: `call ${i}` });
    return hook;
  }

  test('one statement records many attempts; a crash before the second batch loses nothing and resends only the unrecorded ones, same ids', async () => {
    const hook = await hookWithCalls('/batch', 4);
    const claimed = await claimDueDeliveries(t.db.pool, { limit: 10, leaseMs: 60_000 });
    assert.equal(claimed.length, 4);
    const [a, b, c, d] = claimed as [LeasedDelivery, LeasedDelivery, LeasedDelivery, LeasedDelivery];

    const counting = countingPool();
    // b's receiver refused it with a 400: the endpoint works, so its concurrency stays (endpoint-health.ts).
    const recorded = await writeOutcomes(counting.pool, [answeredOutcome(a, 200), answeredOutcome(b, 400)]);
    assert.equal(counting.statements(), 1, 'two outcomes, one statement');
    assert.deepEqual(
      recorded.map((r) => r.held),
      [true, true],
    );

    // The worker dies here: c and d were sent (or not), their outcomes never written. Their leases run out.
    await t.db.pool.query("UPDATE webhook_delivery_leases SET expires_at = now() - interval '1 second' WHERE delivery_id = ANY($1)", [
      [c.id, d.id],
    ]);
    const again = await claimDueDeliveries(t.db.pool, { limit: 10, leaseMs: 60_000 });
    assert.deepEqual(new Set(again.map((x) => x.id)), new Set([c.id, d.id]), 'only the unrecorded deliveries come back');
    assert.ok(again.every((x) => x.attempt === 2 && x.lost_attempt === 1));

    const rows = new Map((await deliveriesOf(t, hook.id)).map((row) => [row.id, row]));
    assert.equal(rows.get(a.id)!.status, 'succeeded');
    assert.equal(rows.get(b.id)!.status, 'pending');
    assert.equal(rows.get(b.id)!.lease_token, null);
    assert.deepEqual(await attemptsOf(t, a.id), [{ attempt: 1, status_code: 200, error: null, outcome: 'succeeded' }]);
    assert.deepEqual(await attemptsOf(t, b.id), [{ attempt: 1, status_code: 400, error: null, outcome: 'retrying' }]);
    assert.deepEqual(await attemptsOf(t, c.id), [{ attempt: 1, status_code: null, error: 'lease_expired', outcome: 'retrying' }]);

    // The dead worker's outcome for c arrives late after all: superseded, the new holder's lease untouched.
    const late = await writeOutcomes(t.db.pool, [answeredOutcome(c, 200)]);
    assert.equal(late[0]!.held, false);
    assert.deepEqual(await attemptsOf(t, c.id), [{ attempt: 1, status_code: 200, error: null, outcome: 'superseded' }]);
    const renewed = again.find((x) => x.id === c.id)!;
    assert.equal((await deliveriesOf(t, hook.id)).find((row) => row.id === c.id)!.lease_token, renewed.lease_token);
    await writeOutcomes(
      t.db.pool,
      again.map((x) => answeredOutcome(x, 200)),
    );
    assert.ok((await deliveriesOf(t, hook.id)).every((row) => row.lease_token === null));
  });

  test('a 410 in a batch removes its subscription, its deliveries and their log in the same statement; the rest is recorded', async () => {
    const gone = await hookWithCalls('/gone', 2);
    const kept = await hookWithCalls('/kept', 1);
    const claimed = await claimDueDeliveries(t.db.pool, { limit: 10, leaseMs: 60_000 });
    const of = (hookId: string) => claimed.filter((x) => x.subscription_id === hookId);
    const [goneFirst, goneSecond] = of(gone.id) as [LeasedDelivery, LeasedDelivery];
    const [keptOne] = of(kept.id) as [LeasedDelivery];
    const removal = answeredOutcome(goneFirst, 410);

    const counting = countingPool();
    const recorded = await writeOutcomes(counting.pool, [removal, answeredOutcome(goneSecond, 200), answeredOutcome(keptOne, 200)]);
    assert.equal(counting.statements(), 1, 'the removal is part of the one statement');
    assert.deepEqual(
      recorded.map((r) => r.held),
      [true, true, true],
    );

    const { rows: subscriptions } = await t.db.pool.query('SELECT id FROM webhook_subscriptions WHERE id = ANY($1)', [[gone.id, kept.id]]);
    assert.deepEqual(subscriptions, [{ id: kept.id }]);
    assert.deepEqual(await deliveriesOf(t, gone.id), []);
    assert.deepEqual(await attemptsOf(t, goneFirst.id), []);
    assert.deepEqual(await attemptsOf(t, goneSecond.id), []);
    assert.equal((await deliveriesOf(t, kept.id))[0]!.status, 'succeeded');
    assert.deepEqual(await attemptsOf(t, keptOne.id), [{ attempt: 1, status_code: 200, error: null, outcome: 'succeeded' }]);
  });

  test('a success after failures in one batch ends the failing streak; failures after the last success start one', async () => {
    const hook = await hookWithCalls('/streak', 3);
    const [first, second, third] = (await claimDueDeliveries(t.db.pool, { limit: 10, leaseMs: 60_000 })) as LeasedDelivery[];
    const base = Date.now() - 10_000;
    const at = (ms: number) => new Date(base + ms);
    await writeOutcomes(t.db.pool, [answeredOutcome(first!, 500, at(0)), answeredOutcome(second!, 200, at(1))]);
    const streak = async () =>
      (await t.db.pool.query('SELECT failing_since FROM webhook_subscriptions WHERE id = $1', [hook.id])).rows[0].failing_since;
    assert.equal(await streak(), null);
    await writeOutcomes(t.db.pool, [answeredOutcome(third!, 500, at(2))]);
    assert.equal((await streak()).getTime(), at(2).getTime());
  });

  test('outcomes that finish while a batch is being written go together in the next statement', async () => {
    await hookWithCalls('/group', 5);
    const claimed = await claimDueDeliveries(t.db.pool, { limit: 10, leaseMs: 60_000 });
    const counting = countingPool();
    const recorder = createOutcomeRecorder(counting.pool);
    const results = await Promise.all(claimed.map((x) => recorder.record(answeredOutcome(x, 200))));
    assert.ok(results.every((r) => r.held));
    assert.equal(counting.statements(), 2, 'the first outcome alone, then the four that arrived meanwhile');
    await recorder.idle();
  });

  test('a batch PostgreSQL refuses is written again one outcome at a time: only the outcome it will not take fails', async () => {
    const hook = await hookWithCalls('/refused', 3);
    const [first, bad, good] = (await claimDueDeliveries(t.db.pool, { limit: 10, leaseMs: 60_000 })) as LeasedDelivery[];
    const counting = countingPool();
    const recorder = createOutcomeRecorder(counting.pool);
    // The first is written at once; the other two wait for it and go together,
    // in a statement the status CHECK constraint refuses because of one of them.
    const refused = { ...answeredOutcome(bad!, 200), status: 'bogus' } as unknown as OutcomeRecord;
    const results = await Promise.allSettled([
      recorder.record(answeredOutcome(first!, 200)),
      recorder.record(refused),
      recorder.record(answeredOutcome(good!, 200)),
    ]);
    await recorder.idle();
    assert.equal(results[0].status, 'fulfilled');
    assert.equal(results[1].status, 'rejected');
    assert.match(String((results[1] as PromiseRejectedResult).reason), /check constraint/);
    assert.deepEqual(results[2], {
      status: 'fulfilled',
      value: { deliveryId: good!.id, held: true, subscriptionId: hook.id, disabledNow: false, circuitRetryAt: null, dropped: false },
    });
    assert.equal(counting.statements(), 4, 'the first alone, the refused pair, then each of the pair alone');

    const rows = new Map((await deliveriesOf(t, hook.id)).map((row) => [row.id, row]));
    assert.equal(rows.get(first!.id)!.status, 'succeeded');
    assert.equal(rows.get(good!.id)!.status, 'succeeded');
    // The refused one keeps its lease: when it runs out the delivery is sent again, as after a crash.
    assert.equal(rows.get(bad!.id)!.status, 'pending');
    assert.equal(rows.get(bad!.id)!.lease_token, bad!.lease_token);
    assert.deepEqual(await attemptsOf(t, bad!.id), []);
  });

  test('once PARALLEL_MIN outcomes wait behind a batch on its way, a second batch is written beside it; each is answered after its own commit', async () => {
    // One held, and more than PARALLEL_MIN behind it: two hooks, since one may have ten in flight.
    const hooks = [await hookWithCalls('/parallel-a', 10), await hookWithCalls('/parallel-b', 10)];
    const claimed = (await claimDueDeliveries(t.db.pool, { limit: 20, leaseMs: 60_000 })).filter((c) =>
      hooks.some((h) => h.id === c.subscription_id),
    );
    assert.ok(claimed.length > PARALLEL_MIN, `${claimed.length} claimed`);
    const [held, ...rest] = claimed as LeasedDelivery[];
    // Hold the first batch inside PostgreSQL: its UPDATE waits for this row lock.
    const blocker = await t.db.pool.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT 1 FROM webhook_deliveries WHERE id = $1 FOR UPDATE', [held!.id]);
      const recorder = createOutcomeRecorder(t.db.pool);
      let firstDone = false;
      const first = recorder.record(answeredOutcome(held!, 200)).then((r) => {
        firstDone = true;
        return r;
      });
      const others = await Promise.race([
        Promise.all(rest.map((x) => recorder.record(answeredOutcome(x, 200)))),
        new Promise<'stuck'>((resolve) => setTimeout(() => resolve('stuck'), 5000)),
      ]);
      assert.notEqual(others, 'stuck', 'the waiting outcomes were written while the first batch was held');
      assert.ok((others as { held: boolean }[]).every((r) => r.held));
      assert.equal(firstDone, false, 'the first batch is still waiting for its row');
      const statuses = new Map((await Promise.all(hooks.map((h) => deliveriesOf(t, h.id)))).flat().map((row) => [row.id, row.status]));
      assert.equal(statuses.get(held!.id), 'pending', 'nothing of the held batch is committed');
      assert.ok(
        rest.every((x) => statuses.get(x.id) === 'succeeded'),
        'the second batch is committed',
      );
      await blocker.query('COMMIT');
      assert.equal((await first).held, true);
      await recorder.idle();
      assert.deepEqual(await attemptsOf(t, held!.id), [{ attempt: 1, status_code: 200, error: null, outcome: 'succeeded' }]);
    } finally {
      await blocker.query('ROLLBACK').catch(() => {});
      blocker.release();
    }
  });
});
