// npm run bench:claim [-- --rows N --due D --subscriptions S --organizations O]
//
// The delivery claim's cost among many tenants: S subscriptions (default
// 10,000) spread over O organizations (default 1,000), N rows in
// webhook_deliveries (default 1,000,000), D of them due now (default
// 100,000), spread over every subscription, the rest delivered, failed or
// due tomorrow. One organization also holds a backlog of D/2 due rows of its
// own on one subscription. The subscriptions' endpoints have answered before
// (none is degraded). After a warm-up sweep it prints the claim's round trip
// as the worker sends it (both statements and the next-due read), rolled back
// (the goal, ≤ 5 ms) and committed, and each statement's EXPLAIN (ANALYZE) time.
// BENCH_SHOW_PLANS=1 prints the plans. DATABASE_URL selects the server;
// unset, an embedded PostgreSQL runs in a temporary directory.
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { migrate } from '../src/db/migrate.ts';
import { createPool, type Pool } from '../src/db/pool.ts';
import { withTransaction } from '../src/db/transaction.ts';
import { createClient } from '../src/oauth/clients.service.ts';
import { createGrant } from '../src/oauth/tokens.service.ts';
import { insertOrganization } from '../src/organizations/organizations.queries.ts';
import { createUser } from '../src/organizations/organizations.service.ts';
import { claimDue, claimStatements } from '../src/webhooks/worker/claim.queries.ts';
import { MAX_IN_FLIGHT_PER_SUBSCRIPTION, SLOW_ATTEMPT_MS, degradedSlots } from '../src/webhooks/worker/endpoint-health.ts';
import { WALK } from '../src/webhooks/worker/claim-candidates.ts';
import { benchDatabase } from './bench-database.ts';

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    due: { type: 'string', default: '100000' },
    subscriptions: { type: 'string', default: '10000' },
    organizations: { type: 'string', default: '1000' },
  },
});
const ROWS = Number(args.rows);
const DUE = Number(args.due);
const SUBSCRIPTIONS = Number(args.subscriptions);
const ORGANIZATIONS = Number(args.organizations);
const CONCURRENCY = 64;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function main() {
  // BENCH_CLAIM_KEEP=1 leaves the loaded database behind and prints its address; BENCH_CLAIM_URL reuses it.
  const reuse = process.env.BENCH_CLAIM_URL;
  const database = reuse ? { url: reuse, stop: async () => {} } : await benchDatabase();
  const pool = createPool(database.url, 4);
  try {
    await migrate(pool);
    if (!reuse) await load(pool);
    await measure(pool);
  } finally {
    await pool.end();
    if (process.env.BENCH_CLAIM_KEEP) process.stdout.write(`database kept: ${database.url}\n`);
    else await database.stop();
  }
}

async function load(pool: Pool) {
  const org = await insertOrganization(pool, 'Claim Bench Org 0');
  const user = await createUser(pool, {
    email: 'claim-bench@example.com',
    password: 'bench-password',
    organizationId: org.id,
    role: 'owner',
  });
  const client = await createClient(pool, { name: 'Claim Bench Platform', redirectUris: ['https://bench.example/cb'] });
  const grant = await withTransaction(pool, (tx) =>
    createGrant(tx, { clientUuid: client.client.id, userId: user.id, organizationId: org.id, scopes: ['calls:read'] }),
  );
  process.stdout.write(`loading ${SUBSCRIPTIONS} subscriptions in ${ORGANIZATIONS} organizations, ${ROWS} deliveries (${DUE} due)...\n`);
  // Every organization's subscriptions stand on the one grant: the claim tests the grant, not whose it is.
  await pool.query(`INSERT INTO organizations (name) SELECT 'Claim Bench Org ' || i FROM generate_series(1, $1) i`, [ORGANIZATIONS - 1]);
  await pool.query(
    `WITH orgs AS (SELECT id, row_number() OVER (ORDER BY id) - 1 AS k FROM organizations)
     INSERT INTO webhook_subscriptions (organization_id, client_id, grant_id, event, callback_url, answered)
     SELECT orgs.id, $2, $3, 'call.completed', 'https://127.0.0.1:9/hook/' || i, true
       FROM generate_series(0, $1 - 1) i JOIN orgs ON orgs.k = i % $4`,
    [SUBSCRIPTIONS, client.client_id, grant.id, ORGANIZATIONS],
  );
  const chunk = 100_000;
  const backlog = Math.floor(DUE / 2);
  for (let done = 0; done < ROWS; done += chunk) {
    const size = Math.min(chunk, ROWS - done);
    // Row n: the first `backlog` rows are one subscription's backlog, the next DUE - backlog are
    // due for every subscription alike, the rest are finished or due tomorrow.
    await pool.query(
      `WITH subs AS (SELECT id, organization_id, row_number() OVER (ORDER BY id) - 1 AS k FROM webhook_subscriptions),
       placed AS MATERIALIZED (
         SELECT n, gen_random_uuid() AS call_id, subs.id AS subscription_id, subs.organization_id
           FROM generate_series($1::bigint, $1::bigint + $2 - 1) n
           JOIN subs ON subs.k = CASE WHEN n < $3 THEN 0 ELSE n % $4 END
       ),
       c AS (
         INSERT INTO calls (id, organization_id, status, completed_at, summary, duration_seconds)
         SELECT call_id, organization_id, 'completed', now(), 'backlog', 1 FROM placed
       )
       INSERT INTO webhook_deliveries (organization_id, subscription_id, call_id, event, body, status, attempts, next_attempt_at, finished_at)
       SELECT organization_id, subscription_id, call_id, 'call.completed', '{"id":"' || call_id || '"}',
              CASE WHEN n < $5 OR n % 3 = 0 THEN 'pending' WHEN n % 3 = 1 THEN 'succeeded' ELSE 'failed' END,
              CASE WHEN n < $5 THEN 0 ELSE 1 END,
              CASE WHEN n < $5 THEN now() - interval '1 second' ELSE now() + interval '1 day' END,
              CASE WHEN n < $5 OR n % 3 = 0 THEN NULL ELSE now() END
         FROM placed`,
      [done, size, backlog, SUBSCRIPTIONS, DUE],
    );
  }
  await pool.query('VACUUM ANALYZE');
  // What the background writer does in a running server: the load's dirty pages are written, not left for the claims to evict.
  await pool.query('CHECKPOINT');
}

/**
 * The claim in a worker's steady state. First a warm-up: one sweep (the walk
 * from the first subscription to the last, as a running worker makes every
 * second), rolled back, so the pages the walk reads are in memory as they are
 * in a running server. Then two figures, each the median of 21:
 *   - rolled back: the claim's round trip (both statements and the next-due
 *     read) in a transaction rolled back, as bench:delivery's --backlog figure
 *     measures it (the figure the goal was set from);
 *   - committed: claims as a worker makes them, each committed (its leases
 *     stay: the next claim takes other deliveries, whose pages are colder),
 *     its walk going on from the last one's cursor, one hinted subscription (a
 *     fresh NOTIFY) each.
 * The EXPLAIN (ANALYZE) of the statements, rolled back, follows.
 */
async function measure(pool: Pool) {
  const limits = {
    limit: CONCURRENCY,
    degradedLimit: degradedSlots(CONCURRENCY),
    maxSubscriptions: 50,
    maxInFlight: MAX_IN_FLIGHT_PER_SUBSCRIPTION,
    leaseMs: 60_000,
    slowMs: SLOW_ATTEMPT_MS,
  };
  const { rows: hinted } = await pool.query<{ id: string }>('SELECT id FROM webhook_subscriptions ORDER BY random() LIMIT 21');
  const client = await pool.connect();
  const rolledBack: number[] = [];
  let cursor: string | null = null;
  try {
    for (let sweep = 0; sweep < SUBSCRIPTIONS / WALK + 1; sweep++) {
      await client.query('BEGIN');
      cursor = (await claimDue(client, { ...limits, hints: [], cursor, walk: WALK, degraded: [] })).cursor;
      await client.query('ROLLBACK');
    }
    for (let i = 0; i < 21; i++) {
      await client.query('BEGIN');
      const started = performance.now();
      const claim = await claimDue(client, { ...limits, hints: [hinted[i]!.id], cursor, walk: WALK, degraded: [] });
      rolledBack.push(performance.now() - started);
      await client.query('ROLLBACK');
      cursor = claim.cursor;
    }
  } finally {
    client.release();
  }
  const committed: number[] = [];
  const leased: number[] = [];
  for (let i = 0; i < 21; i++) {
    const started = performance.now();
    const claim = await claimDue(pool, { ...limits, hints: [hinted[i]!.id], cursor, walk: WALK, degraded: [] });
    await claim.committed;
    committed.push(performance.now() - started);
    leased.push(claim.claimed.length);
    cursor = claim.cursor;
  }
  const explained: number[] = [];
  const explaining = await pool.connect();
  try {
    await explaining.query('BEGIN');
    const { subscriptions, leases, nextDue } = claimStatements({ ...limits, hints: [], cursor, walk: WALK, degraded: [] });
    for (const statement of [subscriptions, leases, nextDue]) {
      const { rows } = await explaining.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${statement}`);
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      explained.push(Number(/Execution Time: ([\d.]+)/.exec(plan)?.[1]));
      if (process.env.BENCH_SHOW_PLANS) process.stdout.write(`${plan}\n\n`);
    }
    await explaining.query('ROLLBACK');
  } finally {
    explaining.release();
  }
  const roundTrip = median(rolledBack);
  process.stdout.write(
    `claim, ${SUBSCRIPTIONS} subscriptions, ${ORGANIZATIONS} organizations, ${ROWS} rows (${DUE} due), after a warm-up sweep:\n` +
      `  round trip ${roundTrip.toFixed(2)} ms (median of 21 rolled back, as bench:delivery measures it)\n` +
      `  round trip ${median(committed).toFixed(2)} ms (median of 21 committed claims, ${median(leased)} leased each)\n` +
      `  EXPLAIN ANALYZE lock ${explained[0]!.toFixed(2)} + lease ${explained[1]!.toFixed(2)} + next due ${explained[2]!.toFixed(2)} ms\n`,
  );
  process.stdout.write(`goal ≤ 5 ms (rolled back): ${roundTrip <= 5 ? 'met' : 'not met'}\n`);
}

await main();
