// npm run bench:api — authenticated reads and refresh rotation against a real
// `switchboard serve`, each side in its own process.
//
// Three processes, as a new user would run them: this one (setup, then the
// load generator: autocannon at 50 connections), the server (`node
// bin/switchboard.js serve`, default settings apart from the rate limits, which
// would otherwise refuse a benchmark from one address) and a bare Fastify
// process (bench/bare-server.js) whose GET / is the baseline. Rows:
//   GET /                bare Fastify (baseline)
//   GET /healthz         no credentials, no database
//   GET /calls/recent    Authorization: Bearer + x-client-id + x-client-secret, 10k calls in the organization
//   GET /locations       x-user-token, 10 locations
//   POST /oauth/token    grant_type=refresh_token with rotation and reuse detection (REFRESH_REUSE_GRACE default):
//                        every request presents the refresh token the previous answer returned
//   POST /calls          x-user-token, a completed call, one active subscription (its outbox row in the same statement)
// and a final line of ratios to the baseline.
//
// DATABASE_URL selects the PostgreSQL server; unset, an embedded one runs in a
// temporary directory. BENCH_DURATION (seconds, default 10) sets each run's length;
// BENCH_CPU_PROF=dir has the server write a V8 CPU profile (--cpu-prof) into dir;
// BENCH_ROWS=recent,locations,healthz,refresh,calls-post runs only those rows (after the
// baseline); BENCH_SERVER_DIR=checkout runs that checkout's server instead.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { openSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { issueSession } from '../src/auth/sessions.service.ts';
import { insertCompletedCall } from '../src/calls/calls.queries.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool } from '../src/db/pool.ts';
import { withOrg } from '../src/db/with-org.ts';
import { withTransaction } from '../src/db/transaction.ts';
import { createLocation } from '../src/locations/locations.service.ts';
import { createClient } from '../src/oauth/clients.service.ts';
import { createGrant, issueTokenPair } from '../src/oauth/tokens.service.ts';
import { insertOrganization } from '../src/orgs/organizations.queries.ts';
import { createUser } from '../src/orgs/orgs.service.ts';
import { createSecretBox } from '../src/webhooks/secret-box.ts';
import { subscribe } from '../src/webhooks/subscriptions.service.ts';
import { benchDatabase } from './bench-database.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CONNECTIONS = 50;
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CALLS = 10_000;
const LOCATIONS = 10;
/** Refresh chains: one per connection at a time, plus spares for chains a failed answer ends. */
const REFRESH_CHAINS = 400;
const TTLS = { accessTokenTtl: 3600, refreshTokenTtl: 5_184_000 };

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

interface Child {
  process: ChildProcess;
  url: string;
  /** Milliseconds from spawn to the first successful `ready` probe. */
  startupMs: number;
  log(): string;
  stop(): Promise<void>;
}

/** Spawns a server with its output in a file (never through this process), and waits until `readyPath` answers 200. */
async function startChild(name: string, args: string[], env: NodeJS.ProcessEnv, readyPath: string, logDir: string): Promise<Child> {
  const port = await freePort();
  const logFile = path.join(logDir, `${name}.log`);
  const fd = openSync(logFile, 'w');
  const started = performance.now();
  const child = spawn(process.execPath, [...args.map((a) => a.replace('$PORT', String(port)))], {
    cwd: ROOT,
    env: { ...env, PORT: String(port) },
    stdio: ['ignore', fd, fd],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const log = () => readFileSync(logFile, 'utf8');
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}:\n${log()}`);
    const ok = await fetch(url + readyPath).then((r) => r.status === 200, () => false);
    if (ok) break;
    if (performance.now() - started > 120_000) throw new Error(`${name} not ready within 120 s:\n${log()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const startupMs = performance.now() - started;
  return {
    process: child,
    url,
    startupMs,
    log,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

type Result = Awaited<ReturnType<typeof autocannon>>;

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** utime + stime (+ children's, when asked) of a process, in clock ticks. */
function cpuTicks(pid: number, withChildren = false): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const own = Number(fields[11]) + Number(fields[12]);
    return withChildren ? own + Number(fields[13]) + Number(fields[14]) : own;
  } catch {
    return 0;
  }
}

/** CPU of the embedded PostgreSQL: the postmaster, its live backends and every exited one. */
function postgresTicks(pgdata: string | undefined): number | undefined {
  if (!pgdata) return undefined;
  const postmaster = Number(readFileSync(path.join(pgdata, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let total = cpuTicks(postmaster, true);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === postmaster) total += cpuTicks(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

interface CpuShare {
  nodeUs: number;
  postgresUs: number | undefined;
}

function row(name: string, r: Result & { cpu?: CpuShare }, unit = 'req/s', rate = r.requests.average): string {
  const cpu = r.cpu ? `   CPU/req: server ${r.cpu.nodeUs.toFixed(0)} µs${r.cpu.postgresUs === undefined ? '' : `, PostgreSQL ${r.cpu.postgresUs.toFixed(0)} µs`}` : '';
  return `${name.padEnd(40)} ${rate.toFixed(0).padStart(7)} ${unit.padEnd(11)} p50 ${String(r.latency.p50).padStart(3)} ms   p99 ${String(r.latency.p99).padStart(3)} ms   non-2xx ${r.non2xx}   errors ${r.errors + r.timeouts}${cpu}`;
}

/**
 * One unmeasured second first (JIT, pool connections, prepared statements),
 * then the run, with the CPU the server process and PostgreSQL spent per
 * request: unlike req/s, that holds still when other work shares the machine.
 */
async function measure(options: Parameters<typeof autocannon>[0], serverPid?: number, pgdata?: string): Promise<Result & { cpu?: CpuShare }> {
  await autocannon({ ...options, duration: 1 });
  const node0 = serverPid ? cpuTicks(serverPid) : 0;
  const pg0 = serverPid ? postgresTicks(pgdata) : undefined;
  const result = await autocannon({ ...options, duration: DURATION });
  if (!serverPid) return result;
  const requests = result.requests.total || 1;
  const us = (ticks: number) => (ticks * 1e6) / TICKS_PER_SECOND / requests;
  const pg1 = postgresTicks(pgdata);
  return { ...result, cpu: { nodeUs: us(cpuTicks(serverPid) - node0), postgresUs: pg0 === undefined || pg1 === undefined ? undefined : us(pg1 - pg0) } };
}

/** Every request presents a current refresh token and returns the successor to the pool. */
function refreshRequests(chains: string[], basic: string) {
  return [{
    method: 'POST' as const,
    path: '/oauth/token',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    setupRequest(request: Record<string, unknown>, context: Record<string, unknown>) {
      const token = chains.shift();
      if (token === undefined) throw new Error('bench:api ran out of refresh chains (too many failed refreshes)');
      context.token = token;
      return { ...request, body: `grant_type=refresh_token&refresh_token=${encodeURIComponent(token)}` };
    },
    onResponse(status: number, body: string) {
      if (status === 200) chains.push((JSON.parse(body) as { refresh_token: string }).refresh_token);
    },
  }];
}

async function main() {
  const db = await benchDatabase();
  const logDir = await mkdtemp(path.join(os.tmpdir(), 'switchboard-bench-logs-'));
  const pool = createPool(db.url, 5);
  const children: Child[] = [];
  const closers: (() => Promise<void>)[] = [];
  try {
    await migrate(pool);
    const secretKey = randomBytes(32);
    const org = await insertOrganization(pool, 'Bench Org');
    const user = await createUser(pool, { email: 'bench@example.com', password: 'bench-password', organizationId: org.id, role: 'owner' });
    const session = await issueSession(pool, user, org.id);
    const client = await createClient(pool, { name: 'Bench Platform', redirectUris: ['https://bench.example/cb'] });
    const pair = async () => withTransaction(pool, async (tx) => {
      const grant = await createGrant(tx, { clientUuid: client.client.id, userId: user.id, organizationId: org.id, scopes: ['calls:read'] });
      return issueTokenPair(tx, TTLS, { grantId: grant.id, accessScopes: ['calls:read'], refreshScopes: ['calls:read'] });
    });
    const tokens = await pair();
    const chains: string[] = [];
    for (let i = 0; i < REFRESH_CHAINS; i++) chains.push((await pair()).refresh_token);
    await withOrg(pool, org.id, async (tx) => {
      for (let i = 0; i < CALLS; i++) await insertCompletedCall(tx, { agentId: null, summary: `Bench call ${i}`, durationSeconds: i % 600 });
    });
    for (let i = 0; i < LOCATIONS; i++) {
      await createLocation(pool, org.id, { name: `Location ${i}`, city: 'Springfield', country: 'US', is_primary: i === 0 } as never);
    }
    // POST /calls row (issue #10): one active subscription, so every call writes its outbox
    // row in the same statement. Its receiver accepts connections and never answers, so the
    // server's own worker holds at most the per-subscription cap in flight (10 s time-outs)
    // and the row measures ingest, not delivery (bench:delivery does that).
    const held = new Set<net.Socket>();
    const silent = net.createServer((socket) => {
      held.add(socket);
      socket.on('close', () => held.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    // close() waits for every connection, and this receiver never ends one itself.
    closers.push(() => new Promise<void>((resolve) => {
      silent.close(() => resolve());
      for (const socket of held) socket.destroy();
    }));
    const hookGrant = await withTransaction(pool, (tx) => createGrant(tx, { clientUuid: client.client.id, userId: user.id, organizationId: org.id, scopes: ['calls:read'] }));
    await subscribe(
      { pool, secretBox: createSecretBox(secretKey), urlCheck: { allowPrivate: true, allowedPorts: '*' } },
      { kind: 'oauth', userId: user.id, organizationId: org.id, scopes: ['calls:read'], clientId: client.client_id, grantId: hookGrant.id },
      { hookUrl: `https://127.0.0.1:${(silent.address() as net.AddressInfo).port}/hook`, secret: 'bench-secret' },
    );

    const serverEnv: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: db.url,
      SECRET_KEY: secretKey.toString('base64'),
      // The POST /calls row's silent receiver listens on loopback.
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_ALLOWED_PORTS: '*',
      // One address sends everything here; the default budgets are per address or token.
      RATE_LIMIT: '100000000/min',
      TOKEN_RATE_LIMIT: '100000000/min',
    };
    const bare = await startChild('bare', [path.join(ROOT, 'bench/bare-server.js'), '$PORT'], { PATH: process.env.PATH }, '/', logDir);
    children.push(bare);
    // BENCH_CPU_PROF=dir: the server writes a V8 CPU profile there when it stops.
    const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`] : [];
    // BENCH_SERVER_DIR: another checkout's server (say, the code before a change) against the same data and load.
    const serverBin = path.join(path.resolve(process.env.BENCH_SERVER_DIR ?? ROOT), 'bin/switchboard.js');
    const server = await startChild('serve', [...profile, serverBin, 'serve'], serverEnv, '/readyz', logDir);
    children.push(server);

    const platform = { authorization: `Bearer ${tokens.access_token}`, 'x-client-id': client.client_id, 'x-client-secret': client.client_secret };
    const user_ = { 'x-user-token': session.token };
    for (const [p, h] of [['/calls/recent', platform], ['/locations', user_]] as const) {
      const probe = await fetch(server.url + p, { headers: h });
      if (probe.status !== 200) throw new Error(`${p} answered ${probe.status} to the benchmark's credentials: ${await probe.text()}`);
    }

    process.stdout.write(`bench:api — autocannon ${CONNECTIONS} connections, ${DURATION}s per row (+1s warm-up), server and baseline in their own processes\n`);
    const idleRss = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${server.process.pid}/status`, 'utf8'))?.[1];
    process.stdout.write(`serve: ready (/readyz 200) ${server.startupMs.toFixed(0)} ms after spawn; idle resident memory ${(Number(idleRss) / 1024).toFixed(0)} MiB\n`);
    const baseline = await measure({ url: `${bare.url}/`, connections: CONNECTIONS });
    process.stdout.write(`${row('GET / (bare Fastify, baseline)', baseline)}\n`);
    const pid = server.process.pid!;
    // BENCH_ROWS=recent,refresh (say) runs only those rows after the baseline, e.g. to profile one route.
    const only = process.env.BENCH_ROWS?.split(',');
    const skipped = { requests: { average: NaN, total: 0 }, latency: { p50: NaN, p99: NaN }, errors: 0, timeouts: 0, non2xx: 0, '2xx': 0 } as unknown as Result;
    const wanted = <T,>(name: string, run: () => Promise<T>) => (only && !only.includes(name) ? Promise.resolve(skipped as T) : run());
    const healthz = await wanted('healthz', () => measure({ url: `${server.url}/healthz`, connections: CONNECTIONS }, pid, db.pgdata));
    process.stdout.write(`${row('GET /healthz', healthz)}\n`);
    const recent = await wanted('recent', () => measure({ url: `${server.url}/calls/recent`, connections: CONNECTIONS, headers: platform }, pid, db.pgdata));
    process.stdout.write(`${row(`GET /calls/recent (3 headers, ${CALLS / 1000}k calls)`, recent)}\n`);
    const locations = await wanted('locations', () => measure({ url: `${server.url}/locations`, connections: CONNECTIONS, headers: user_ }, pid, db.pgdata));
    process.stdout.write(`${row('GET /locations (x-user-token)', locations)}\n`);
    const basic = Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64');
    const refresh = await wanted('refresh', () => measure({ url: server.url, connections: CONNECTIONS, requests: refreshRequests(chains, basic) }, pid, db.pgdata));
    const rotations = refresh['2xx'] / DURATION;
    process.stdout.write(`${row('POST /oauth/token (refresh, rotation)', refresh, 'rotations/s', rotations)}\n`);
    const postCalls = await wanted('calls-post', () => measure({
      url: `${server.url}/calls`, connections: CONNECTIONS, method: 'POST',
      headers: { ...user_, 'content-type': 'application/json' },
      body: JSON.stringify({ summary: 'Customer booked a visit for next Tuesday', duration_seconds: 184 }),
    }, pid, db.pgdata));
    process.stdout.write(`${row('POST /calls (completed, 1 subscription)', postCalls)}\n`);
    const memory = await fetch(`${server.url}/metrics`).then((r) => r.text()).then((t) => /^switchboard_process_resident_memory_bytes (\S+)/m.exec(t)?.[1]);
    if (memory) process.stdout.write(`serve: resident memory after the runs ${(Number(memory) / 2 ** 20).toFixed(0)} MiB\n`);

    const ratio = (r: Result) => (r.requests.average / baseline.requests.average).toFixed(2);
    const verdict = (ok: boolean) => (ok ? 'ok' : 'BELOW GOAL');
    process.stdout.write(
      `ratio vs bare: healthz ${ratio(healthz)}× (goal ≥0.9, ${verdict(healthz.requests.average >= 0.9 * baseline.requests.average)})`
      + ` | calls/recent ${ratio(recent)}× p99 ${recent.latency.p99} ms (goal ≥0.25, p99 ≤20, ${verdict(recent.requests.average >= 0.25 * baseline.requests.average && recent.latency.p99 <= 20)})`
      + ` | locations ${ratio(locations)}× (goal ≥0.25, ${verdict(locations.requests.average >= 0.25 * baseline.requests.average)})`
      + ` | refresh ${rotations.toFixed(0)}/s (goal ≥1000, ${verdict(rotations >= 1000)})`
      + ` | POST /calls ${ratio(postCalls)}× (goal ≥0.15, ${verdict(postCalls.requests.average >= 0.15 * baseline.requests.average)})\n`,
    );
  } finally {
    for (const child of children.reverse()) await child.stop();
    for (const close of closers) await close();
    await pool.end();
    await db.stop();
    await rm(logDir, { recursive: true, force: true });
  }
}

await main();
// Nothing should be left, but a handle still open (a pool socket, a timer) must not hold the heavy lock.
process.exit(0);
