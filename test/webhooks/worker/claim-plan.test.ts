import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../../helpers/app.ts';
import { connectPlatform, startWebhookApp, subscribeHook } from '../../helpers/webhooks.ts';
import { claimStatements } from '../../../src/webhooks/worker/claim.queries.ts';

interface PlanNode {
  'Node Type': string;
  'Plan Rows': number;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

// The claim must read indexes, never the backlog: its cost follows the batch,
// not the rows stored (docs/performance.md; the 1,000,000-row proof is
// `npm run bench:delivery -- --backlog 1000000`). A small table here, with
// sequential and bitmap scans priced out, shows that every statement of the
// claim can be answered through the partial indexes, and that the leasing
// statement neither scans nor sorts a subscription's whole backlog.
describe('the claim plan', () => {
  let t: TestApp;

  before(async () => {
    t = await startWebhookApp();
    const org = await connectPlatform(t);
    const hooks = [
      await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/plan-a' }),
      await subscribeHook(t, org, { hookUrl: 'https://127.0.0.1:9/plan-b' }),
    ];
    // 2,000 calls × 2 hooks: most due now (enough that a guessed limit shows), the rest delivered, failed or due tomorrow.
    await t.db.pool.query(
      `WITH c AS (
         INSERT INTO calls (organization_id, status, completed_at, summary, duration_seconds)
         SELECT $1, 'completed', now(), 'plan', 1 FROM generate_series(1, 2000) RETURNING id
       ), numbered AS (
         SELECT c.id AS call_id, s.id AS subscription_id, row_number() OVER () AS n FROM c CROSS JOIN unnest($2::uuid[]) AS s(id)
       )
       INSERT INTO webhook_deliveries (organization_id, subscription_id, call_id, event, body, status, next_attempt_at, finished_at)
       SELECT $1, subscription_id, call_id, 'call.completed', '{}',
              CASE WHEN n <= 3000 OR n % 3 = 0 THEN 'pending' WHEN n % 3 = 1 THEN 'succeeded' ELSE 'failed' END,
              CASE WHEN n <= 3000 THEN now() - interval '1 second' ELSE now() + interval '1 day' END,
              CASE WHEN n <= 3000 OR n % 3 = 0 THEN NULL ELSE now() END
         FROM numbered`,
      [org.member.org.id, hooks.map((h) => h.id)],
    );
    await t.db.pool.query('ANALYZE webhook_deliveries');
  });
  after(() => t.close());

  test('every statement of the claim reads webhook_deliveries through an index, and leasing sorts no backlog', async () => {
    const client = await t.db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL enable_seqscan = off');
      await client.query('SET LOCAL enable_bitmapscan = off');
      const statements = claimStatements({
        limit: 64,
        slowLimit: 16,
        maxSubscriptions: 50,
        maxInFlight: 10,
        leaseMs: 60_000,
        slowMs: 1000,
        hints: [],
        cursor: null,
        walk: 100,
        slow: [],
      }).split(/;\n\n/);
      assert.equal(statements.length, 3);
      const plans: PlanNode[][] = [];
      for (const statement of statements) {
        const { rows } = await client.query(`EXPLAIN (FORMAT JSON) ${statement.replace(/;\s*$/, '')}`);
        plans.push(nodes(rows[0]['QUERY PLAN'][0].Plan as PlanNode));
      }
      for (const [i, plan] of plans.entries()) {
        const onDeliveries = plan.filter((node) => node['Relation Name'] === 'webhook_deliveries');
        assert.ok(onDeliveries.length > 0, `statement ${i + 1} reads webhook_deliveries`);
        for (const node of onDeliveries) {
          assert.ok(
            ['Index Scan', 'Index Only Scan', 'Tid Scan', 'ModifyTable'].includes(node['Node Type']),
            `statement ${i + 1}: ${node['Node Type']} on webhook_deliveries`,
          );
        }
      }
      const leasing = plans[1]!;
      // The leasing UPDATE reaches the picked rows by tuple id, a plan no statistics can change
      // (a join let a generic plan walk the due index once per picked row).
      const updated = leasing.filter(
        (node) =>
          node['Relation Name'] === 'webhook_deliveries' &&
          node['Node Type'] !== 'ModifyTable' &&
          !(node['Index Name'] ?? '').startsWith('webhook_deliveries_due') &&
          node['Index Name'] !== 'webhook_deliveries_live_leases_idx',
      );
      // (Twice: locked, skipping rows another transaction is writing, then updated.)
      assert.deepEqual(
        updated.map((node) => node['Node Type']),
        ['Tid Scan', 'Tid Scan'],
        'the leased rows are found by tuple id',
      );
      const dueScans = leasing.filter((node) => node['Index Name'] === 'webhook_deliveries_due_idx');
      assert.ok(dueScans.length > 0, 'leasing walks webhook_deliveries_due_idx');
      // The per-subscription walk stops at the cap: a Limit directly above the index scan, no Sort below it.
      const walks = leasing.filter(
        (node) => node['Node Type'] === 'Limit' && (node.Plans ?? []).some((child) => child['Index Name'] === 'webhook_deliveries_due_idx'),
      );
      assert.ok(walks.length > 0, 'the due index walk is cut by the per-subscription limit');
      // A limit the planner can read (the cap, and one more to tell whether more is due), not a
      // parameter it guesses at 10 % of the backlog: that guess made it sort every due row of a subscription at scale.
      assert.ok(
        walks.every((node) => node['Plan Rows'] <= 11),
        `per-subscription walk estimated at ${walks.map((n) => n['Plan Rows'])} rows`,
      );
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  });

  // With every plan allowed, as the worker runs it: prepared, so PostgreSQL may keep one generic
  // plan. The state test in the leasing UPDATE must match no index: written plainly, a generic
  // plan walked the whole due index (every subscription's due rows) and filtered on the tuple ids.
  test('the leasing UPDATE reaches its rows by tuple id in a generic plan, with every scan allowed', async () => {
    const client = await t.db.pool.connect();
    try {
      await client.query('BEGIN');
      // The statistics of a young table: only a few rows due (what the worker's first claims see).
      await client.query(`DELETE FROM webhook_deliveries WHERE status = 'pending'
                            AND id NOT IN (SELECT id FROM webhook_deliveries WHERE status = 'pending' LIMIT 10)`);
      await client.query('ANALYZE webhook_deliveries');
      await client.query('SET LOCAL plan_cache_mode = force_generic_plan');
      const leasing = claimStatements({
        limit: 64,
        slowLimit: 16,
        maxSubscriptions: 50,
        maxInFlight: 10,
        leaseMs: 60_000,
        slowMs: 1000,
        hints: [],
        cursor: null,
        walk: 100,
        slow: [],
      }).split(/;\n\n/)[1]!;
      await client.query(`PREPARE plan_test_leasing AS ${leasing.replace(/;\s*$/, '')}`);
      const { rows } = await client.query('EXPLAIN (FORMAT JSON) EXECUTE plan_test_leasing');
      const plan = nodes(rows[0]['QUERY PLAN'][0].Plan as PlanNode);
      const update = plan.find((node) => node['Node Type'] === 'ModifyTable')!;
      assert.ok(update, 'the leasing statement updates webhook_deliveries');
      const target = (update.Plans ?? []).flatMap(nodes).filter((node) => node['Relation Name'] === 'webhook_deliveries');
      assert.deepEqual(
        target.map((node) => node['Node Type']),
        ['Tid Scan'],
        'the leased rows are found by tuple id',
      );
      // Live leases are counted on the index that ranges over their expiry, not the whole leased set.
      assert.ok(
        plan.some((node) => node['Index Name'] === 'webhook_deliveries_live_leases_idx'),
        'live leases counted through webhook_deliveries_live_leases_idx',
      );
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  });
});
