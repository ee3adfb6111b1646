// npm run bench:dashboard — the delivery-health pages on a large organization.
//
// One organization with 100,000 calls over the last 30 days, 5 subscriptions,
// 500,000 deliveries and 1,000,000 delivery attempts (the delivery log keeps 30
// days), plus a second organization of the same shape at a tenth of the size
// (so the queries must skip other tenants' rows too). After VACUUM ANALYZE (what
// autovacuum does in production), it times the pages as the server handles
// them (app.inject: routing, session, queries, rendering; no network), first
// the first view of each (which stores the sealed days and hours it counted),
// then repeated views:
//   GET /                    the home dashboard (target: under 100 ms)
//   GET /ui/webhooks/{id}    a subscription's charts (200,000 attempts of its own)
//   GET /ui/calls            the first page of calls, filtered by agent
// and prints the plan of every chart query (EXPLAIN ANALYZE, run as the
// application role under row-level security, exactly as the pages run them),
// failing if one scans a whole table or the dashboard's p95 passes 100 ms.
//
// DATABASE_URL selects the PostgreSQL server; unset, an embedded one runs in a
// temporary directory. BENCH_RUNS (default 40) sets the timed requests per page.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { buildApp } from '../src/app.ts';
import { issueSession } from '../src/auth/sessions.service.ts';
import { loadConfig } from '../src/config/config.ts';
import { countCallsPerDay, countDeliveriesByStatus, listSealedCallDays } from '../src/dashboard/dashboard.queries.ts';
import { sealedBoundary, DAY_MS, HOUR_MS } from '../src/dashboard/sealed-windows.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool, type Queryable } from '../src/db/pool.ts';
import { withOrg } from '../src/db/with-org.ts';
import { listCalls } from '../src/calls/calls.queries.ts';
import { createClient } from '../src/oauth/clients.service.ts';
import { createGrant } from '../src/oauth/tokens.service.ts';
import { insertOrganization } from '../src/organizations/organizations.queries.ts';
import { createUser } from '../src/organizations/organizations.service.ts';
import {
  countAttemptOutcomesPerHour,
  countFailedDeliveries,
  findLatestFailedAttempt,
  latencyPercentiles,
  listSealedAttemptHours,
} from '../src/webhooks/delivery-health.queries.ts';
import { benchDatabase } from './bench-database.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 40);
const DASHBOARD_BUDGET_MS = 100;

/**
 * One organization's history, written set-wise: calls over 30 days (a third
 * with an agent), one delivery per call and subscription, two attempts per
 * delivery (a retry then the outcome: 90% succeed, 10% fail for good).
 */
async function seedOrganization(
  pool: pg.Pool,
  input: { organizationId: string; clientId: string; grantId: string; calls: number; subscriptions: number },
) {
  const {
    rows: [agent],
  } = await pool.query<{ id: string }>("INSERT INTO agents (organization_id, name) VALUES ($1, 'Bench agent') RETURNING id", [
    input.organizationId,
  ]);
  const subscriptions: string[] = [];
  for (let i = 0; i < input.subscriptions; i++) {
    const { rows } = await pool.query<{ id: string }>(
      `INSERT INTO webhook_subscriptions (organization_id, client_id, grant_id, event, callback_url, failing_since)
       VALUES ($1, $2, $5, 'call.completed', $3, CASE WHEN $4 = 0 THEN now() - interval '3 hours' END) RETURNING id`,
      [input.organizationId, input.clientId, `https://hooks.example/${input.organizationId}/${i}`, i, input.grantId],
    );
    subscriptions.push(rows[0]!.id);
  }
  const span = 30 * 86_400;
  await pool.query(
    `INSERT INTO calls (organization_id, agent_id, status, created_at, completed_at, summary, duration_seconds)
     SELECT $1, CASE WHEN g % 3 = 0 THEN $2::uuid END, 'completed', t, t + interval '2 minutes', 'Bench call ' || g, 120
       FROM generate_series(1, $3) g, LATERAL (SELECT now() - make_interval(secs => (g::float8 * $4 / $3))) s(t)`,
    [input.organizationId, agent!.id, input.calls, span],
  );
  for (const subscriptionId of subscriptions) {
    await pool.query(
      `INSERT INTO webhook_deliveries (organization_id, subscription_id, call_id, event, body, status, attempts, created_at, updated_at, finished_at)
       SELECT organization_id, $2, id, 'call.completed', '{}', CASE WHEN hashtext(id::text) % 10 = 0 THEN 'failed' ELSE 'succeeded' END, 2,
              created_at, completed_at, completed_at
         FROM calls WHERE organization_id = $1`,
      [input.organizationId, subscriptionId],
    );
    await pool.query(
      `INSERT INTO webhook_attempts (organization_id, delivery_id, subscription_id, attempt, attempted_at, status_code, latency_ms, outcome)
       SELECT d.organization_id, d.id, d.subscription_id, a.n, d.created_at + make_interval(secs => a.n * 30),
              CASE WHEN a.n = 1 OR d.status = 'failed' THEN 503 ELSE 200 END, 40 + (hashtext(d.id::text || a.n) & 255),
              CASE WHEN a.n = 1 THEN 'retrying' WHEN d.status = 'failed' THEN 'failed' ELSE 'succeeded' END
         FROM webhook_deliveries d CROSS JOIN generate_series(1, 2) a(n)
        WHERE d.subscription_id = $1`,
      [subscriptionId],
    );
  }
  return { agentId: agent!.id, subscriptions };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** A Queryable that runs EXPLAIN ANALYZE of each statement instead, keeping the plans. */
function explaining(db: Queryable, plans: string[]): Queryable {
  return {
    async query(text: string, values?: unknown[]) {
      const { rows } = await (db as pg.PoolClient).query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${text}`, values);
      plans.push(rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n'));
      return { rows: [{}], rowCount: 0 };
    },
  } as unknown as Queryable;
}

async function main() {
  const db = await benchDatabase();
  const pool = createPool(db.url, 10);
  let failed = false;
  try {
    await migrate(pool);
    const started = performance.now();
    const org = await insertOrganization(pool, 'Bench Org');
    const noise = await insertOrganization(pool, 'Other Org');
    const user = await createUser(pool, { email: 'bench@example.com', password: 'bench-password', organizationId: org.id, role: 'owner' });
    const client = await createClient(pool, {
      name: 'Bench Platform',
      redirectUris: ['https://platform.example/cb'],
      scopes: ['calls:read'],
    });
    const other = await createUser(pool, {
      email: 'other@example.com',
      password: 'bench-password',
      organizationId: noise.id,
      role: 'owner',
    });
    // Subscriptions belong to the grant that made them (migration 0007).
    const grant = (userId: string, organizationId: string) =>
      createGrant(pool, { clientUuid: client.client.id, userId, organizationId, scopes: ['calls:read'] });
    const mine = await seedOrganization(pool, {
      organizationId: org.id,
      clientId: client.client_id,
      grantId: (await grant(user.id, org.id)).id,
      calls: 100_000,
      subscriptions: 5,
    });
    await seedOrganization(pool, {
      organizationId: noise.id,
      clientId: client.client_id,
      grantId: (await grant(other.id, noise.id)).id,
      calls: 10_000,
      subscriptions: 5,
    });
    await pool.query('VACUUM ANALYZE');
    const counts = await pool.query<{ calls: string; deliveries: string; attempts: string }>(
      `SELECT (SELECT count(*) FROM calls WHERE organization_id = $1) AS calls,
              (SELECT count(*) FROM webhook_deliveries WHERE organization_id = $1) AS deliveries,
              (SELECT count(*) FROM webhook_attempts WHERE organization_id = $1) AS attempts`,
      [org.id],
    );
    const c = counts.rows[0]!;
    console.log(
      `seeded in ${((performance.now() - started) / 1000).toFixed(0)} s: ${c.calls} calls, ${c.deliveries} deliveries, ${c.attempts} attempts in the organization (+10% in another)`,
    );

    const config = loadConfig({ ...process.env, DATABASE_URL: db.url, LOG_LEVEL: 'warn', SECRET_KEY: randomBytes(32).toString('base64') });
    const app = await buildApp({ config, pool, logStream: process.stderr, rateLimitNamespace: 'bench' });
    const session = await issueSession(pool, user, org.id);
    const cookies = { sb_session: session.token };
    const busiest = mine.subscriptions[0]!;

    const pages = [
      { label: 'GET / (dashboard)', url: '/', budget: DASHBOARD_BUDGET_MS },
      { label: 'GET /ui/webhooks/{id}', url: `/ui/webhooks/${busiest}` },
      { label: 'GET /ui/calls?agent=', url: `/ui/calls?agent=${mine.agentId}` },
    ];
    console.log('');
    for (const page of pages) {
      // The first view of a page stores the sealed days and hours it counted (once per organization or subscription).
      const c0 = performance.now();
      await app.inject({ url: page.url, cookies });
      console.log(`${`${page.label}, first view`.padEnd(36)}${`${(performance.now() - c0).toFixed(1)} ms`.padStart(10)}`);
    }
    console.log('');
    for (const page of pages) {
      const times: number[] = [];
      for (let i = 0; i < RUNS + 5; i++) {
        const t0 = performance.now();
        const res = await app.inject({ url: page.url, cookies });
        const elapsed = performance.now() - t0;
        if (res.statusCode !== 200) throw new Error(`${page.url}: ${res.statusCode} ${res.body.slice(0, 200)}`);
        if (i >= 5) times.push(elapsed);
      }
      times.sort((a, b) => a - b);
      if (page === pages[0])
        console.log(
          `${'page'.padEnd(26)}${'p50'.padStart(10)}${'p95'.padStart(10)}${'max'.padStart(10)}   (${RUNS} requests each, after 5 warm-up)`,
        );
      const ms = (v: number) => `${v.toFixed(1)} ms`.padStart(10);
      const over = page.budget !== undefined && percentile(times, 95) >= page.budget;
      if (over) failed = true;
      console.log(
        `${page.label.padEnd(26)}${ms(percentile(times, 50))}${ms(percentile(times, 95))}${ms(times.at(-1)!)}${over ? `   OVER ${page.budget} ms` : ''}`,
      );
    }

    const plans: string[] = [];
    const now = new Date();
    await withOrg(pool, org.id, async (client) => {
      const x = explaining(client, plans);
      // What a page view runs once the sealed days and hours are stored: those, plus the open window.
      await listSealedCallDays(x, new Date(now.getTime() - 30 * DAY_MS).toISOString().slice(0, 10));
      await countCallsPerDay(x, { from: sealedBoundary(now, DAY_MS) });
      await countDeliveriesByStatus(x, new Date(now.getTime() - DAY_MS));
      await listSealedAttemptHours(x, { subscriptionId: busiest, from: new Date(now.getTime() - 7 * DAY_MS) });
      await countAttemptOutcomesPerHour(x, { subscriptionId: busiest, from: sealedBoundary(now, HOUR_MS) });
      await latencyPercentiles(x, { subscriptionId: busiest, since: new Date(now.getTime() - DAY_MS) });
      await findLatestFailedAttempt(x, busiest);
      await countFailedDeliveries(x, { subscriptionId: busiest, since: new Date(now.getTime() - 30 * 86_400_000), cap: 1001 });
      await listCalls(x, { limit: 26, agentId: mine.agentId });
    });
    console.log('\nPlans (EXPLAIN ANALYZE as the application role, under row-level security):');
    for (const plan of plans) {
      console.log(`\n${plan}`);
      if (/Seq Scan on (calls|webhook_attempts|webhook_deliveries)\b/.test(plan)) {
        failed = true;
        console.log('^^^ FULL TABLE SCAN');
      }
    }
    await app.close();
  } finally {
    await pool.end();
    await db.stop();
  }
  if (failed) {
    console.error('\nbench:dashboard FAILED: a budget was exceeded or a query scans a whole table');
    process.exit(1);
  }
}

await main();
