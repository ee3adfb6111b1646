import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../../helpers/app.ts';
import { connectPlatform, startWebhookApp, subscribeHook } from '../../helpers/webhooks.ts';
import { executeText } from '../../../src/db/named-statement.ts';
import { claimLeases } from '../../../src/webhooks/worker/claim-leases.queries.ts';
import { claimSubscriptions } from '../../../src/webhooks/worker/claim-subscriptions.queries.ts';
import { CLAIM_NEXT_DUE } from '../../../src/webhooks/worker/claim-next-due.queries.ts';
import { CLAIM_SCANS, CLAIM_PLAN_MODE, claimDue, claimStatements } from '../../../src/webhooks/worker/claim.queries.ts';

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

/**
 * `calls` completed calls, each with a delivery to every hook: most due now (enough that a
 * guessed limit shows: the first 3,000 of two hooks' 4,000), the rest delivered, failed or due tomorrow.
 */
async function fillDeliveries(t: TestApp, organizationId: string, hooks: string[], calls: number): Promise<void> {
  await t.db.pool.query(
    `WITH c AS (
       INSERT INTO calls (organization_id, status, completed_at, summary, duration_seconds)
       SELECT $1, 'completed', now(), 'plan', 1 FROM generate_series(1, $3::int) RETURNING id
     ), numbered AS (
       SELECT c.id AS call_id, s.id AS subscription_id, row_number() OVER () AS n FROM c CROSS JOIN unnest($2::uuid[]) AS s(id)
     )
     INSERT INTO webhook_deliveries (organization_id, subscription_id, call_id, event, body, status, next_attempt_at, finished_at)
     SELECT $1, subscription_id, call_id, 'call.completed', '{}',
            CASE WHEN n <= 3000 OR n % 3 = 0 THEN 'pending' WHEN n % 3 = 1 THEN 'succeeded' ELSE 'failed' END,
            CASE WHEN n <= 3000 THEN now() - interval '1 second' ELSE now() + interval '1 day' END,
            CASE WHEN n <= 3000 OR n % 3 = 0 THEN NULL ELSE now() END
       FROM numbered`,
    [organizationId, hooks, calls],
  );
}

/**
 * A database whose claim statements a connection prepared at its first claim, while the table
 * held one delivery, and which has grown to thousands since (no ANALYZE, which would have the
 * plans made again): `explain` reads the generic plan that connection keeps for a statement.
 */
async function grownAfterFirstClaim(path: string) {
  const young = await startWebhookApp();
  const client = await young.db.pool.connect();
  const close = async () => {
    client.release();
    await young.close();
  };
  let first: Awaited<ReturnType<typeof claimDue>>;
  let executes: Record<'subscriptions' | 'leases' | 'nextDue', string>;
  try {
    const org = await connectPlatform(young);
    const hook = await subscribeHook(young, org, { hookUrl: `https://127.0.0.1:9/${path}` });
    await fillDeliveries(young, org.member.org.id, [hook.id], 1);
    // No lease in flight, as autovacuum last saw the table after a quiet spell.
    await young.db.pool.query('ANALYZE webhook_delivery_leases');
    // The connection's first claim: prepares the statements and makes their generic plan.
    await client.query('BEGIN');
    const limits = { limit: 64, degradedLimit: 16, maxSubscriptions: 50, maxInFlight: 10, leaseMs: 60_000, slowMs: 1000 };
    first = await claimDue(client, { ...limits, hints: [], cursor: null, walk: 100, degraded: [] });
    await client.query('ROLLBACK');
    await fillDeliveries(young, org.member.org.id, [hook.id], 2000);
    const leases = { limit: '64', degradedLimit: '16', leaseMs: '60000', slowMs: '1000', degraded: "'{}'::uuid[]" };
    executes = {
      subscriptions: executeText(claimSubscriptions(10), {
        ...leases,
        maxSubscriptions: '50',
        cursor: 'NULL::uuid',
        hints: `'{${hook.id}}'::uuid[]`,
        walk: '100',
      }),
      leases: executeText(claimLeases(10), leases),
      nextDue: executeText(CLAIM_NEXT_DUE, {}),
    };
  } catch (error) {
    await close();
    throw error;
  }
  return {
    first,
    /** The plan the connection keeps for the claim's statement (claim_subscriptions, claim_leases, claim_next_due), as nodes. */
    async explain(statement: 'subscriptions' | 'leases' | 'nextDue'): Promise<PlanNode[]> {
      await client.query('BEGIN');
      // plan_cache_mode = force_generic_plan (CLAIM_PLAN_MODE): the plan the connection keeps, not one made for these values.
      await client.query(CLAIM_PLAN_MODE[1]);
      const { rows } = await client.query(`EXPLAIN (FORMAT JSON) ${executes[statement]}`);
      await client.query('ROLLBACK');
      return nodes(rows[0]['QUERY PLAN'][0].Plan as PlanNode);
    },
    close,
  };
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
    await fillDeliveries(
      t,
      org.member.org.id,
      hooks.map((h) => h.id),
      2000,
    );
    await t.db.pool.query('ANALYZE webhook_deliveries');
  });
  after(() => t.close());

  test('every statement of the claim reads webhook_deliveries through an index (claim_subscriptions and claim_leases with enable_seqscan and enable_bitmapscan off, CLAIM_SCANS), and leasing sorts no backlog', async () => {
    const client = await t.db.pool.connect();
    try {
      await client.query('BEGIN');
      const statements = claimStatements({
        limit: 64,
        degradedLimit: 16,
        maxSubscriptions: 50,
        maxInFlight: 10,
        leaseMs: 60_000,
        slowMs: 1000,
        hints: [],
        cursor: null,
        walk: 100,
        degraded: [],
      });
      const plans: PlanNode[][] = [];
      for (const [name, statement] of [
        ['subscriptions', statements.subscriptions],
        ['leases', statements.leases],
        ['nextDue', statements.nextDue],
      ] as const) {
        // Each under the settings the claim runs it with: sequential and bitmap scans off but for claim_next_due.
        if (name === 'subscriptions') for (const [, setting] of CLAIM_SCANS) await client.query(setting);
        if (name === 'nextDue') await client.query('SET LOCAL enable_seqscan TO DEFAULT; SET LOCAL enable_bitmapscan TO DEFAULT');
        const { rows } = await client.query(`EXPLAIN (FORMAT JSON) ${statement}`);
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
      // Leasing reaches the picked rows by tuple id, a plan no statistics can change
      // (a join let a generic plan walk the due index once per picked row).
      const updated = leasing.filter(
        (node) =>
          node['Relation Name'] === 'webhook_deliveries' &&
          node['Node Type'] !== 'ModifyTable' &&
          !(node['Index Name'] ?? '').startsWith('webhook_deliveries_due'),
      );
      // (Twice: locked, skipping rows another transaction is writing, then the taken-over ones counted.)
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

  // As the worker runs it: prepared, with one generic plan kept per connection, made at the
  // connection's first claim, while the table may hold a single row. That plan must still
  // reach the picked rows by tuple id and count live leases on their index once the table has
  // grown: planned for a one-page table with every scan allowed, it scanned the whole table
  // twice per claim. The state test in the leasing lock must match no index either: written
  // plainly, a generic plan walked the whole due index and filtered on the tuple ids.
  test("the worker's claim, planned while the table held one delivery, reaches rows by tuple id once it holds thousands (claim_subscriptions and claim_leases planned with enable_seqscan and enable_bitmapscan off: with them on, their kept plans scan tables)", async () => {
    const grown = await grownAfterFirstClaim('young');
    try {
      assert.equal(grown.first.claimed.length, 1, 'the first claim leased the one delivery');
      const plan = await grown.explain('leases');
      const onDeliveries = plan.filter((node) => node['Relation Name'] === 'webhook_deliveries' && node['Node Type'] !== 'ModifyTable');
      assert.deepEqual(
        onDeliveries
          .filter((node) => !['Index Scan', 'Index Only Scan', 'Tid Scan'].includes(node['Node Type']))
          .map((n) => n['Node Type']),
        [],
        'webhook_deliveries is read through indexes and tuple ids only',
      );
      assert.deepEqual(
        onDeliveries.filter((node) => node['Node Type'] === 'Tid Scan').length,
        2,
        'the leased rows are found by tuple id (locked, then the taken-over ones counted)',
      );
      assert.ok(
        plan.some((node) => node['Index Name'] === 'webhook_delivery_leases_subscription_idx'),
        'live leases counted through webhook_delivery_leases_subscription_idx',
      );
      // Leases are read by delivery or by subscription: never a scan of the table, nor
      // through the index of all leases' ends.
      const perSubscription = [...plan, ...(await grown.explain('subscriptions'))];
      const leaseReads = perSubscription
        .filter((node) => node['Relation Name'] === 'webhook_delivery_leases' && node['Node Type'] !== 'ModifyTable')
        .map((node) => node['Index Name'] ?? node['Node Type']);
      assert.ok(leaseReads.length > 0, 'the claim reads leases');
      assert.deepEqual(
        leaseReads.filter((read) => !['webhook_delivery_leases_pkey', 'webhook_delivery_leases_subscription_idx'].includes(read)),
        [],
        `leases read by delivery or subscription only: ${leaseReads.join(', ')}`,
      );
      // Subscriptions and their grants are reached by id, one candidate at a time: planned from
      // the grants' side, the lock statement tested every subscription of every live grant on each claim.
      const byId = new Map([
        ['webhook_subscriptions', 'webhook_subscriptions_pkey'],
        ['oauth_grants', 'oauth_grants_pkey'],
      ]);
      const reads = perSubscription
        .filter((node) => byId.has(node['Relation Name'] ?? '') && node['Node Type'] !== 'ModifyTable')
        .map((node) => `${node['Relation Name']} ${node['Index Name'] ?? node['Node Type']}`);
      assert.deepEqual(
        reads.filter((read) => ![...byId].some(([table, pkey]) => read === `${table} ${pkey}`)),
        [],
        `subscriptions and grants read by primary key only: ${reads.join(', ')}`,
      );
    } finally {
      await grown.close();
    }
  });

  // The next-due read runs after every claim, on the plan made at the connection's first claim.
  // Each of its time sources must be one probe of an index ordered by that time, whatever the
  // statistics said then: as min() planned on a young table, the retry and circuit sources read
  // every entry of their indexes and the lease source sorted every pending delivery read through
  // webhook_deliveries_due_idx (6.5 ms a claim among 512 failing endpoints, bench:neighbour).
  test("the next-due read, planned while the table held one delivery, probes one entry of each time's index", async () => {
    const grown = await grownAfterFirstClaim('young-next');
    try {
      const plan = await grown.explain('nextDue');
      const probes = plan
        .filter((node) => node['Node Type'] === 'Limit')
        .flatMap((limit) => limit.Plans ?? [])
        .map((node) => node['Index Name']);
      assert.deepEqual(
        probes.sort(),
        ['webhook_deliveries_retry_due_idx', 'webhook_delivery_leases_expires_idx', 'webhook_subscriptions_open_circuit_idx'],
        'each time is the first entry of its own index',
      );
      const reads = plan.filter((node) => node['Index Name'] !== undefined).map((node) => node['Index Name']);
      assert.equal(reads.length, 3, `indexes read: ${reads.join(', ')}`);
    } finally {
      await grown.close();
    }
  });
});
