// npm run bench:filters — what subscription filters cost the fan-out of a completed call.
//
// Two organizations on one PostgreSQL, each completing calls through the calls
// service (what POST /calls does after authentication), no worker running, so
// that what is measured is the statement that writes the call and fans it out:
//   unfiltered  10 subscriptions without filters: 10 deliveries per call
//   filtered   100 subscriptions with filters on every key, 10 of which match
//              the calls: 10 deliveries per call, 90 subscriptions ruled out
// PostgreSQL CPU per call (the server's processes, from /proc) is read for each
// side in alternating slices (U F, F U, U F, …), and each pair gives a ratio
// filtered ÷ unfiltered. Goal: the median ratio at most 1.2.
//
// DATABASE_URL selects the PostgreSQL server (it must run on this machine, for
// /proc); unset, an embedded one runs in a temporary directory.
// Options: --calls N per slice (default 400), --pairs P (default 5), --clients C
// concurrent completers (default 8).
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createAgent } from '../src/calls/agents.service.ts';
import { createCall } from '../src/calls/calls.service.ts';
import type { CallFiltersObject } from '../src/calls/calls.queries.ts';
import { NO_CACHES } from '../src/cache/caches.ts';
import { createSecretBox } from '../src/crypto/secret-box.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool, type Pool } from '../src/db/pool.ts';
import { withTransaction } from '../src/db/transaction.ts';
import { createLocation } from '../src/locations/locations.service.ts';
import { createClient } from '../src/oauth/clients.service.ts';
import { createGrant } from '../src/oauth/tokens.service.ts';
import { insertOrganization } from '../src/organizations/organizations.queries.ts';
import { createUser } from '../src/organizations/organizations.service.ts';
import { subscribe } from '../src/webhooks/subscriptions.service.ts';
import { benchDatabase } from './bench-database.ts';
import { postmasterOf, serverCpuSeconds } from './process-cpu.ts';

const { values: args } = parseArgs({
  options: {
    calls: { type: 'string', default: '400' },
    pairs: { type: 'string', default: '5' },
    clients: { type: 'string', default: '8' },
  },
});
const CALLS = Number(args.calls);
const PAIRS = Number(args.pairs);
const CLIENTS = Number(args.clients);
const GOAL = 1.2;

interface Side {
  name: 'unfiltered' | 'filtered';
  organizationId: string;
  call: Record<string, unknown>;
}

/** An organization with one platform grant and the given subscriptions (one filters object each). */
async function organizationWith(
  pool: Pool,
  label: string,
  filters: (ids: { location: string; otherLocation: string; agent: string; otherAgent: string }) => CallFiltersObject[],
) {
  const org = await insertOrganization(pool, `Bench ${label}`);
  const user = await createUser(pool, { email: `${label}@example.com`, password: 'bench-password', organizationId: org.id, role: 'owner' });
  const client = await createClient(pool, { name: `Bench ${label}`, redirectUris: ['https://bench.example/cb'] });
  const grant = await withTransaction(pool, (tx) =>
    createGrant(tx, { clientUuid: client.client.id, userId: user.id, organizationId: org.id, scopes: ['calls:read'] }),
  );
  const ids = {
    location: (await createLocation(pool, NO_CACHES, org.id, { name: 'Leeds' })).id,
    otherLocation: (await createLocation(pool, NO_CACHES, org.id, { name: 'Bristol' })).id,
    agent: (await createAgent(pool, org.id, 'Ada')).id,
    otherAgent: (await createAgent(pool, org.id, 'Grace')).id,
  };
  const list = filters(ids);
  const deps = {
    pool,
    secretBox: createSecretBox(randomBytes(32)),
    urlCheck: { allowPrivate: true, allowedPorts: '*' as const },
    maxSubscriptions: list.length,
  };
  const principal = {
    kind: 'oauth' as const,
    userId: user.id,
    organizationId: org.id,
    scopes: ['calls:read'],
    clientId: client.client_id,
    grantId: grant.id,
  };
  for (const [i, f] of list.entries()) {
    await subscribe(deps, principal, { hookUrl: `https://127.0.0.1:9/${label}/${i}`, filters: f });
  }
  // Every call matches the ten subscriptions that are meant to match.
  const call = { direction: 'inbound', location_id: ids.location, agent_id: ids.agent, summary: 'Bench call', duration_seconds: 60 };
  return { organizationId: org.id, call };
}

const unfilteredSubscriptions = () => Array.from({ length: 10 }, () => ({}));

/** 10 that match an inbound 60 s call of Ada at Leeds (a filter on each key, alone and together), 90 that do not. */
function filteredSubscriptions(ids: { location: string; otherLocation: string; agent: string; otherAgent: string }): CallFiltersObject[] {
  const matching: CallFiltersObject[] = [
    { direction: 'inbound' },
    { location_id: ids.location },
    { agent_id: ids.agent },
    { min_duration_seconds: 30 },
    { direction: 'inbound', location_id: ids.location },
    { direction: 'inbound', agent_id: ids.agent },
    { location_id: ids.location, min_duration_seconds: 60 },
    { direction: 'inbound', location_id: ids.location, agent_id: ids.agent, min_duration_seconds: 1 },
    { agent_id: ids.agent, min_duration_seconds: 10 },
    { direction: 'inbound', min_duration_seconds: 5 },
  ];
  const ruledOut: CallFiltersObject[] = [
    ...Array.from({ length: 30 }, () => ({ direction: 'outbound' as const })),
    ...Array.from({ length: 25 }, () => ({ location_id: ids.otherLocation })),
    ...Array.from({ length: 20 }, () => ({ agent_id: ids.otherAgent })),
    ...Array.from({ length: 15 }, () => ({ direction: 'inbound' as const, min_duration_seconds: 3600 })),
  ];
  return [...matching, ...ruledOut];
}

async function slice(pool: Pool, side: Side, postmaster: number): Promise<number> {
  let next = 0;
  const before = serverCpuSeconds(postmaster);
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < CALLS) {
        next++;
        await createCall(pool, side.organizationId, side.call);
      }
    }),
  );
  return ((serverCpuSeconds(postmaster) - before) / CALLS) * 1e6;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

async function main() {
  const database = await benchDatabase();
  const pool = createPool(database.url, CLIENTS);
  try {
    await migrate(pool);
    const unfiltered: Side = { name: 'unfiltered', ...(await organizationWith(pool, 'unfiltered', unfilteredSubscriptions)) };
    const filtered: Side = { name: 'filtered', ...(await organizationWith(pool, 'filtered', filteredSubscriptions)) };
    const {
      rows: [backend],
    } = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const postmaster = postmasterOf(backend!.pid);
    if (postmaster === undefined) throw new Error('bench:filters: PostgreSQL must run on this machine (its CPU is read from /proc)');

    // Warm both sides (plans, caches, JIT of this process) before anything is timed.
    await slice(pool, unfiltered, postmaster);
    await slice(pool, filtered, postmaster);
    const { rows: check } = await pool.query<{ organization_id: string; per_call: string }>(
      `SELECT c.organization_id, count(d.*)::float / count(DISTINCT c.id) AS per_call
         FROM calls c JOIN webhook_deliveries d ON d.call_id = c.id GROUP BY c.organization_id`,
    );
    for (const row of check) {
      if (Number(row.per_call) !== 10) throw new Error(`bench:filters: ${row.per_call} deliveries per call, not 10`);
    }

    const ratios: number[] = [];
    const figures = { unfiltered: [] as number[], filtered: [] as number[] };
    for (let pair = 0; pair < PAIRS; pair++) {
      const order = pair % 2 ? [filtered, unfiltered] : [unfiltered, filtered];
      const cost: Record<string, number> = {};
      for (const side of order) cost[side.name] = await slice(pool, side, postmaster);
      figures.unfiltered.push(cost.unfiltered!);
      figures.filtered.push(cost.filtered!);
      ratios.push(cost.filtered! / cost.unfiltered!);
      process.stdout.write(
        `pair ${pair + 1}: PostgreSQL CPU per call, unfiltered ${cost.unfiltered!.toFixed(0)} µs, filtered ${cost.filtered!.toFixed(0)} µs, ratio ${ratios.at(-1)!.toFixed(2)}\n`,
      );
    }
    const ratio = median(ratios);
    process.stdout.write(
      `\n| row | PostgreSQL CPU per call (median) | ratio (median of ${PAIRS} pairs) | goal |\n|---|---:|---:|---|\n` +
        `| 10 unfiltered subscriptions | ${median(figures.unfiltered).toFixed(0)} µs | — | — |\n` +
        `| 100 filtered, 10 match | ${median(figures.filtered).toFixed(0)} µs | **${ratio.toFixed(2)} ×** | ≤ ${GOAL} ×: ${ratio <= GOAL ? 'met' : 'not met'} |\n`,
    );
  } finally {
    await pool.end();
    await database.stop();
  }
}

await main();
