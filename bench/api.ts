// npm run bench:api — the cost of the platform guard under load.
//
// One process, one database: autocannon at 50 connections against a platform
// endpoint with the three headers (Authorization: Bearer, x-client-id,
// x-client-secret), then against a bare route of the same process, and the
// ratio of their throughput. The platform endpoint is /calls/recent when this
// build has it, otherwise a route behind the same guard that answers [].
//
// DATABASE_URL selects the PostgreSQL server; unset, an embedded one runs in a
// temporary directory. BENCH_DURATION (seconds, default 10) sets each run's length.
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { buildApp } from '../src/app.ts';
import { issueSession } from '../src/auth/sessions.service.ts';
import { loadConfig } from '../src/config/config.ts';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool } from '../src/db/pool.ts';
import { withTransaction } from '../src/db/transaction.ts';
import { createClient } from '../src/oauth/clients.service.ts';
import { requirePlatformToken } from '../src/oauth/platform-guard.ts';
import { createGrant, issueTokenPair } from '../src/oauth/tokens.service.ts';
import { insertOrganization } from '../src/orgs/organizations.queries.ts';
import { createUser } from '../src/orgs/orgs.service.ts';

const CONNECTIONS = 50;
const DURATION = Number(process.env.BENCH_DURATION ?? 10);

async function database(): Promise<{ url: string; stop(): Promise<void> }> {
  const server = process.env.DATABASE_URL;
  const name = `switchboard_bench_${randomBytes(4).toString('hex')}`;
  let tmp: string | undefined;
  let stopEmbedded = async () => {};
  let serverUrl = server;
  if (!serverUrl) {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'switchboard-bench-'));
    await chmod(tmp, 0o755);
    const embedded = await startEmbeddedPostgres(tmp);
    serverUrl = embedded.url;
    stopEmbedded = () => embedded.stop();
  }
  const admin = (sql: string) => {
    const url = new URL(serverUrl);
    url.pathname = '/postgres';
    const client = new pg.Client({ connectionString: url.toString() });
    return client.connect().then(() => client.query(sql)).finally(() => client.end());
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async stop() {
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
      await stopEmbedded();
      if (tmp) await rm(tmp, { recursive: true, force: true });
    },
  };
}

function run(url: string, headers: Record<string, string> = {}) {
  return autocannon({ url, connections: CONNECTIONS, duration: DURATION, headers });
}

async function main() {
  const db = await database();
  const pool = createPool(db.url, 20);
  try {
    await migrate(pool);
    const config = loadConfig({ ...process.env, DATABASE_URL: db.url, LOG_LEVEL: 'warn', SECRET_KEY: randomBytes(32).toString('base64') });
    const app = await buildApp({ config, pool, logStream: process.stderr, rateLimitNamespace: 'bench' });
    const hasCallsRecent = app.hasRoute({ method: 'GET', url: '/calls/recent' });
    const guardedPath = hasCallsRecent ? '/calls/recent' : '/bench/guarded';
    if (!hasCallsRecent) app.get('/bench/guarded', { preHandler: requirePlatformToken('calls:read') }, async () => []);
    const address = await app.listen({ port: 0, host: '127.0.0.1' });

    const org = await insertOrganization(pool, 'Bench Org');
    const user = await createUser(pool, { email: 'bench@example.com', password: 'bench-password', organizationId: org.id, role: 'owner' });
    await issueSession(pool, user, org.id);
    const client = await createClient(pool, { name: 'Bench Platform', redirectUris: ['https://bench.example/cb'] });
    const tokens = await withTransaction(pool, async (tx) => {
      const grant = await createGrant(tx, { clientUuid: client.client.id, userId: user.id, organizationId: org.id, scopes: ['calls:read'] });
      return issueTokenPair(tx, config, { grantId: grant.id, accessScopes: ['calls:read'], refreshScopes: ['calls:read'] });
    });
    const headers = { authorization: `Bearer ${tokens.access_token}`, 'x-client-id': client.client_id, 'x-client-secret': client.client_secret };

    const probe = await fetch(address + guardedPath, { headers });
    if (probe.status !== 200) throw new Error(`${guardedPath} answered ${probe.status} to the benchmark's credentials`);

    process.stdout.write(`bench:api — ${CONNECTIONS} connections, ${DURATION}s each, one process (${address})\n`);
    // One unmeasured second on each path first (JIT, pool connections, prepared statement).
    await autocannon({ url: address + guardedPath, connections: CONNECTIONS, duration: 1, headers });
    await autocannon({ url: `${address}/healthz`, connections: CONNECTIONS, duration: 1 });
    const guarded = await run(address + guardedPath, headers);
    const bare = await run(`${address}/healthz`);
    const row = (name: string, r: Awaited<ReturnType<typeof run>>) =>
      `${name.padEnd(36)} ${r.requests.average.toFixed(0).padStart(8)} req/s   p50 ${String(r.latency.p50).padStart(4)} ms   p99 ${String(r.latency.p99).padStart(4)} ms   non-2xx ${r.non2xx}   errors ${r.errors}`;
    process.stdout.write(`${row(`GET ${guardedPath} (3 headers)`, guarded)}\n`);
    process.stdout.write(`${row('GET /healthz (bare)', bare)}\n`);
    process.stdout.write(`ratio guarded/bare: ${(guarded.requests.average / bare.requests.average).toFixed(2)}\n`);
    await app.close();
  } finally {
    await pool.end();
    await db.stop();
  }
}

await main();
