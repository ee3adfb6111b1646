import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../../helpers/app.ts';
import {
  answeredOutcome,
  claimDueDeliveries,
  completeCall,
  connectPlatform,
  startWebhookApp,
  subscribeHook,
} from '../../helpers/webhooks.ts';
import type { PoolClient } from '../../../src/db/pool.ts';
import { analyzeGrownTables } from '../../../src/db/table-statistics.ts';
import { healthPolicy } from '../../../src/webhooks/worker/endpoint-health.ts';
import { handBackLeases } from '../../../src/webhooks/worker/hand-back.queries.ts';
import { recordOutcomes } from '../../../src/webhooks/worker/record.queries.ts';

// The worker's statements are prepared on its connections, and PostgreSQL
// keeps one plan per statement, often made while webhook_deliveries was young:
// the outcome record's read the grown table whole, for every batch, until the
// next ANALYZE. The worker's statistics check (db/table-statistics.ts), not
// autovacuum's next round, analyzes the table once it has doubled, and the
// plans are made again.
describe("the worker's statements, planned while the table held one delivery", () => {
  let t: TestApp;
  let client: PoolClient;
  let hook: string;
  let org: Awaited<ReturnType<typeof connectPlatform>>;
  const policy = healthPolicy([10_000]);

  before(async () => {
    t = await startWebhookApp();
    // No ANALYZE but the statistics check's: autovacuum's would have the kept plans made again.
    await t.db.pool.query('ALTER TABLE webhook_deliveries SET (autovacuum_enabled = false)');
    org = await connectPlatform(t);
    hook = (await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/young-record' })).id;
    client = await t.db.pool.connect();
    // The plan each statement keeps is made at its first run here, not its sixth.
    await client.query('SET plan_cache_mode = force_generic_plan');
  });
  after(async () => {
    client.release();
    await t.close();
  });

  /** Sequential scans of webhook_deliveries that `run` started on the test's connection. */
  async function sequentialScans(run: () => Promise<unknown>): Promise<number> {
    const scans = async () =>
      Number(
        (await client.query("SELECT coalesce(sum(seq_scan), 0) AS n FROM pg_stat_xact_user_tables WHERE relname = 'webhook_deliveries'"))
          .rows[0].n,
      );
    await client.query('BEGIN');
    try {
      const before = await scans();
      await run();
      return (await scans()) - before;
    } finally {
      await client.query('ROLLBACK');
    }
  }

  async function leased() {
    await completeCall(t, org.member);
    const claimed = (await claimDueDeliveries(t.db.pool, { limit: 10, leaseMs: 60_000 })).filter((c) => c.subscription_id === hook);
    assert.equal(claimed.length, 1);
    return claimed[0]!;
  }

  test('recording an outcome and handing a lease back reach the delivery by index or tuple id once the grown table is analyzed', async () => {
    // Planned now, on a table of one delivery.
    const first = await leased();
    assert.equal((await recordOutcomes(client, { records: [answeredOutcome(first, 200)], disableAfterMs: 60_000, policy }))[0]!.held, true);
    await handBackLeases(client, [{ id: first.id, leaseToken: first.lease_token }]);

    // Grown to thousands of rows (another organization's deliveries, due tomorrow).
    await t.db.pool.query(
      `WITH c AS (
         INSERT INTO calls (organization_id, status, completed_at, summary, duration_seconds)
         SELECT $1, 'completed', now(), 'grown', 1 FROM generate_series(1, 5000) RETURNING id
       )
       INSERT INTO webhook_deliveries (organization_id, subscription_id, call_id, event, body, next_attempt_at)
       SELECT $1, $2, c.id, 'call.completed', repeat('x', 500), now() + interval '1 day' FROM c`,
      [org.member.org.id, hook],
    );
    // The worker's check, as it runs every few seconds: the grown table is analyzed once.
    assert.ok((await analyzeGrownTables(t.db.pool)).includes('public.webhook_deliveries'), 'the grown table is analyzed');
    assert.ok(!(await analyzeGrownTables(t.db.pool)).includes('public.webhook_deliveries'), 'not again until it doubles again');

    const second = await leased();
    assert.equal(
      await sequentialScans(async () => {
        const [recorded] = await recordOutcomes(client, { records: [answeredOutcome(second, 500)], disableAfterMs: 60_000, policy });
        assert.equal(recorded!.held, true);
      }),
      0,
      'the outcome record reads no table whole',
    );
    const third = await leased();
    assert.equal(
      await sequentialScans(async () => {
        assert.deepEqual(await handBackLeases(client, [{ id: third.id, leaseToken: third.lease_token }]), [third.id]);
      }),
      0,
      'the hand-back reads no table whole',
    );
  });
});
