// npm run bench:claim-wakeup [-- --subscriptions S --claims N]
//
// The claim an idle worker makes when a NOTIFY wakes it: one call completed
// for an organization with S subscriptions (default 5, bench:delivery's idle
// phase), so S deliveries are due, each on a subscription of its own, with
// the NOTIFY's hints naming them all. The table also holds 200 delivered
// calls. Prints, each a median of N (default 500), rolled back so that every
// claim finds the same rows:
//   - the claim's round trip on a connection of its own (claimDue: the
//     locking, leasing and next-due statements in one message);
//   - each statement's execution (EXPLAIN ANALYZE EXECUTE on the prepared
//     statement, with the claim's plan settings, as the worker runs it).
// It is the largest piece of bench:delivery's idle latency that is the
// engine's own (docs/performance.md, on the first delivery's time).
// BENCH_SHOW_PLANS=1 prints each statement's plan with its nodes' times.
// DATABASE_URL selects the server; unset, an embedded PostgreSQL runs in a
// temporary directory.
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { executeText } from '../src/db/named-statement.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool, type Pool, type PoolClient } from '../src/db/pool.ts';
import { withTransaction } from '../src/db/transaction.ts';
import { createClient } from '../src/oauth/clients.service.ts';
import { createGrant } from '../src/oauth/tokens.service.ts';
import { insertOrganization } from '../src/organizations/organizations.queries.ts';
import { createUser } from '../src/organizations/organizations.service.ts';
import { CLAIM_PLAN_MODE, CLAIM_SCANS, claimDue, claimOf } from '../src/webhooks/worker/claim.queries.ts';
import { MAX_IN_FLIGHT_PER_SUBSCRIPTION, SLOW_ATTEMPT_MS, degradedSlots } from '../src/webhooks/worker/endpoint-health.ts';
import { WALK } from '../src/webhooks/worker/claim-candidates.ts';
import { benchDatabase } from './bench-database.ts';

const { values: args } = parseArgs({
  options: {
    subscriptions: { type: 'string', default: '5' },
    claims: { type: 'string', default: '500' },
  },
});
const SUBSCRIPTIONS = Number(args.subscriptions);
const CLAIMS = Number(args.claims);
/** A worker's slots (WORKER_CONCURRENCY's default). */
const SLOTS = 50;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** S subscriptions on one grant; 200 delivered calls; one call's deliveries due now. */
async function load(pool: Pool): Promise<string[]> {
  const org = await insertOrganization(pool, 'Claim Wake-up Org');
  const user = await createUser(pool, { email: 'wakeup@example.com', password: 'bench-password', organizationId: org.id, role: 'owner' });
  const client = await createClient(pool, { name: 'Claim Wake-up Platform', redirectUris: ['https://bench.example/cb'] });
  const grant = await withTransaction(pool, (tx) =>
    createGrant(tx, { clientUuid: client.client.id, userId: user.id, organizationId: org.id, scopes: ['calls:read'] }),
  );
  await pool.query(
    `INSERT INTO webhook_subscriptions (organization_id, client_id, grant_id, event, callback_url, answered)
     SELECT $1, $2, $3, 'call.completed', 'https://127.0.0.1:9/hook/' || i, true FROM generate_series(1, $4) i`,
    [org.id, client.client_id, grant.id, SUBSCRIPTIONS],
  );
  for (const [calls, status] of [
    [200, 'succeeded'],
    [1, 'pending'],
  ] as const) {
    await pool.query(
      `WITH c AS (INSERT INTO calls (organization_id, status, completed_at, summary, duration_seconds)
                  SELECT $1, 'completed', now(), 'wake-up', 1 FROM generate_series(1, $2) RETURNING id)
       INSERT INTO webhook_deliveries (organization_id, subscription_id, call_id, event, body, status, next_attempt_at, finished_at)
       SELECT $1, s.id, c.id, 'call.completed', repeat('x', 900), $3, now() - interval '1 second',
              CASE WHEN $3 = 'pending' THEN NULL ELSE now() END
         FROM c CROSS JOIN webhook_subscriptions s`,
      [org.id, calls, status],
    );
  }
  await pool.query('VACUUM ANALYZE');
  return (await pool.query<{ id: string }>('SELECT id FROM webhook_subscriptions ORDER BY id')).rows.map((row) => row.id);
}

const limits = {
  limit: SLOTS,
  degradedLimit: degradedSlots(SLOTS),
  maxSubscriptions: 25,
  maxInFlight: MAX_IN_FLIGHT_PER_SUBSCRIPTION,
  leaseMs: 15_000,
  slowMs: SLOW_ATTEMPT_MS,
};

/** The claim's round trips, each rolled back: the median, and how many deliveries each leased. */
async function roundTrips(client: PoolClient, hints: string[]): Promise<{ ms: number; leased: number }> {
  const times: number[] = [];
  let leased = 0;
  for (let i = 0; i < CLAIMS; i++) {
    await client.query('BEGIN');
    const started = performance.now();
    const claim = await claimDue(client, { ...limits, hints, cursor: null, walk: WALK, degraded: [] });
    times.push(performance.now() - started);
    leased = claim.claimed.length;
    await client.query('ROLLBACK');
  }
  return { ms: median(times), leased };
}

/** The claim's statements as the worker sends them, with the arguments of a wake-up naming `hints`. */
function claimSteps(hints: string[]): string[] {
  const { statements, args } = claimOf({ ...limits, hints, cursor: null, walk: WALK, degraded: [] });
  return [
    executeText(statements.subscriptions, args.subscriptions),
    executeText(statements.leases, args.leases),
    executeText(statements.nextDue, {}),
  ];
}

/** Each step's EXPLAIN ANALYZE plan, in one transaction under the claim's plan settings, rolled back. */
async function explained(client: PoolClient, steps: string[], timing: boolean): Promise<string[]> {
  await client.query(`BEGIN; ${CLAIM_PLAN_MODE[1]}; ${CLAIM_SCANS.map(([, sql]) => sql).join('; ')}`);
  const plans: string[] = [];
  for (const step of steps) {
    const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, TIMING ${timing ? 'ON' : 'OFF'}) ${step}`);
    plans.push(rows.map((r) => r['QUERY PLAN']).join('\n'));
  }
  await client.query('ROLLBACK');
  return plans;
}

/** Each statement's execution time (the median of CLAIMS / 10 rounds), as the worker runs the prepared statement. */
async function executions(client: PoolClient, steps: string[]): Promise<number[]> {
  const byStep: number[][] = steps.map(() => []);
  for (let round = 0; round < CLAIMS / 10; round++) {
    const plans = await explained(client, steps, false);
    for (const [n, plan] of plans.entries()) byStep[n]!.push(Number(/Execution Time: ([\d.]+)/.exec(plan)?.[1]));
  }
  return byStep.map(median);
}

async function main() {
  const database = await benchDatabase();
  const pool = createPool(database.url, 2);
  try {
    await migrate(pool);
    const hints = await load(pool);
    const client = await pool.connect();
    try {
      const trip = await roundTrips(client, hints);
      const steps = claimSteps(hints);
      const [lock, lease, nextDue] = await executions(client, steps);
      // BENCH_SHOW_PLANS=1: each plan once more, with its nodes' times.
      if (process.env.BENCH_SHOW_PLANS) process.stdout.write(`${(await explained(client, steps, true)).join('\n\n')}\n\n`);
      process.stdout.write(
        `claim on a wake-up, ${SUBSCRIPTIONS} subscriptions with a delivery due each (${trip.leased} leased), medians of ${CLAIMS}, rolled back:\n` +
          `  round trip ${trip.ms.toFixed(3)} ms (locking, leasing and next-due statements in one message)\n` +
          `  execution: lock ${lock!.toFixed(3)} + lease ${lease!.toFixed(3)} + next due ${nextDue!.toFixed(3)} ms (EXPLAIN ANALYZE EXECUTE)\n`,
      );
    } finally {
      client.release();
    }
  } finally {
    await pool.end();
    await database.stop();
  }
}

await main();
