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
import { writeOutcomes } from '../../../src/webhooks/worker/recorder.ts';

// A lease is a row of webhook_delivery_leases (migration 0033): it must go
// whenever its delivery goes or stops being pending, whoever removes it.
describe('delivery leases', () => {
  let t: TestApp;

  before(async () => {
    t = await startWebhookApp();
  });
  after(() => t.close());

  const leasesOf = async (subscriptionId: string) =>
    (await t.db.pool.query('SELECT delivery_id FROM webhook_delivery_leases WHERE subscription_id = $1', [subscriptionId])).rowCount;

  test('unsubscribing removes the leases of its deliveries with them; the outcomes that come later write nothing', async () => {
    const org = await connectPlatform(t);
    const payload = { hookUrl: 'https://127.0.0.1:9/leases-unsubscribed' };
    const hook = await subscribeHook(t, org, payload);
    await completeCall(t, org.member);
    await completeCall(t, org.member);
    const claimed = (await claimDueDeliveries(t.db.pool, { limit: 10, leaseMs: 60_000 })).filter((c) => c.subscription_id === hook.id);
    assert.equal(claimed.length, 2);
    assert.equal(await leasesOf(hook.id), 2);

    const res = await t.app.inject({ method: 'DELETE', url: '/webhooks/subscribe', headers: org.headers, payload });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(await leasesOf(hook.id), 0, 'the leases went with their deliveries');
    const recorded = await writeOutcomes(
      t.db.pool,
      claimed.map((c) => answeredOutcome(c, 200)),
    );
    assert.deepEqual(
      recorded.map((r) => r.dropped),
      [true, true],
    );
  });

  test('revoking the grant fails the pending deliveries, counts the attempt in flight, and ends its lease: its outcome is superseded', async () => {
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/leases-revoked' });
    await completeCall(t, org.member);
    const [claimed] = (await claimDueDeliveries(t.db.pool, { limit: 10, leaseMs: 60_000 })).filter((c) => c.subscription_id === hook.id);
    assert.equal(claimed!.attempt, 1);

    await t.db.pool.query(
      'UPDATE oauth_grants SET revoked_at = now() WHERE id = (SELECT grant_id FROM webhook_subscriptions WHERE id = $1)',
      [hook.id],
    );
    assert.equal(await leasesOf(hook.id), 0);
    assert.deepEqual(
      (await deliveriesOf(t, hook.id)).map((d) => [d.status, d.attempts, d.lease_token]),
      [['failed', 1, null]],
    );
    const [recorded] = await writeOutcomes(t.db.pool, [answeredOutcome(claimed!, 200)]);
    assert.equal(recorded!.held, false);
    assert.deepEqual(
      (await attemptsOf(t, claimed!.id)).map((a) => [a.attempt, a.outcome]),
      [[1, 'superseded']],
    );
    assert.equal((await deliveriesOf(t, hook.id))[0]!.status, 'failed', 'the late outcome changed nothing');
  });

  test('an outcome recorded under its lease counts the attempt on the delivery and ends the lease', async () => {
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/leases-recorded' });
    await completeCall(t, org.member);
    const [claimed] = (await claimDueDeliveries(t.db.pool, { limit: 10, leaseMs: 60_000 })).filter((c) => c.subscription_id === hook.id);
    const { rows: before } = await t.db.pool.query('SELECT attempts FROM webhook_deliveries WHERE id = $1', [claimed!.id]);
    assert.equal(before[0].attempts, 0, 'a claim does not write the delivery: the attempt in flight is its lease');
    const [recorded] = await writeOutcomes(t.db.pool, [answeredOutcome(claimed!, 200)]);
    assert.equal(recorded!.held, true);
    assert.equal(await leasesOf(hook.id), 0);
    const { rows: afterwards } = await t.db.pool.query('SELECT status, attempts FROM webhook_deliveries WHERE id = $1', [claimed!.id]);
    assert.deepEqual(afterwards[0], { status: 'succeeded', attempts: 1 });
  });
});
