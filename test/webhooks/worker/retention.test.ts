import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../../helpers/app.ts';
import { completeCall, connectPlatform, startWebhookApp, subscribeHook } from '../../helpers/webhooks.ts';
import { purgeDeliveryLog } from '../../../src/webhooks/worker/retention.ts';

describe('delivery log retention', () => {
  let t: TestApp;
  before(async () => {
    t = await startWebhookApp();
  });
  after(() => t.close());

  test('attempts older than 30 days and deliveries finished before then are removed; the rest stay', async () => {
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/retained' });
    const calls = [];
    for (let i = 0; i < 3; i++) calls.push(await completeCall(t, org.member));
    const { rows: deliveries } = await t.db.pool.query<{ id: string; call_id: string }>(
      'SELECT id, call_id FROM webhook_deliveries WHERE subscription_id = $1',
      [hook.id],
    );
    const byCall = new Map(deliveries.map((d) => [d.call_id, d.id]));
    const [oldDone, recentDone, oldPending] = calls.map((c) => byCall.get(c.id)!);
    const attempt = (delivery: string, daysAgo: number, n: number) =>
      t.db.pool.query(
        `INSERT INTO webhook_attempts (organization_id, delivery_id, subscription_id, attempt, attempted_at, status_code, outcome)
       VALUES ($1, $2, $3, $4, now() - $5 * interval '1 day', 500, 'retrying')`,
        [org.member.org.id, delivery, hook.id, n, daysAgo],
      );
    await attempt(oldDone!, 40, 1);
    await attempt(recentDone!, 31, 1);
    await attempt(recentDone!, 2, 2);
    await attempt(oldPending!, 45, 1);
    await t.db.pool.query("UPDATE webhook_deliveries SET status = 'failed', finished_at = now() - interval '35 days' WHERE id = $1", [
      oldDone,
    ]);
    await t.db.pool.query("UPDATE webhook_deliveries SET status = 'succeeded', finished_at = now() - interval '2 days' WHERE id = $1", [
      recentDone,
    ]);

    const removed = await purgeDeliveryLog(t.db.pool);
    assert.deepEqual(removed, { attempts: 3, deliveries: 1 });
    const { rows: left } = await t.db.pool.query('SELECT delivery_id, attempt FROM webhook_attempts WHERE subscription_id = $1', [hook.id]);
    assert.deepEqual(left, [{ delivery_id: recentDone, attempt: 2 }]);
    const { rows: kept } = await t.db.pool.query('SELECT id FROM webhook_deliveries WHERE subscription_id = $1 ORDER BY id', [hook.id]);
    assert.deepEqual(kept.map((r) => r.id).sort(), [recentDone, oldPending].sort(), 'a pending delivery is never removed');
  });
});
