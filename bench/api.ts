// npm run bench:api — authenticated reads and refresh rotation against a real
// `switchboard serve`, each side in its own process.
//
// Three processes, as a new user would run them: this one (setup, then the
// load generator: autocannon at 50 connections), the server (`node
// bin/switchboard.js serve`, default settings apart from the rate limits, which
// would otherwise refuse a benchmark from one address) and a bare Fastify
// process (bench/floors/bare-server.js) whose GET / is the baseline. Rows:
//   GET /                bare Fastify (the baseline, measured beside every row)
//   GET /healthz         no credentials, no database
//   GET /calls/recent    Authorization: Bearer + x-client-id + x-client-secret, 10k calls in the organization
//   GET /locations       x-user-token, 10 locations
//   POST /oauth/token    grant_type=refresh_token with rotation and reuse detection (REFRESH_REUSE_GRACE default):
//                        every request presents the refresh token the previous answer returned
//   POST /calls          x-user-token, a completed call, one active subscription (its outbox row in the same statement)
//   POST /mcp            tools/call list_recent_calls, its CPU per request against GET /calls/recent's (row mcp,
//                        both on the server, interleaved: bench/mcp-row.ts)
//   POST /calls + key    the same with a new Idempotency-Key on every request (row calls-post-idem, only when named;
//                        calls-post-unique, the same request with another header in its place, is its control)
// Each row runs interleaved with the baseline (B R, R B, B R, R B, B R: see
// measurePaired), so its ratio compares two figures taken on the same
// machine at the same time, and a final line gives the ratios and goals.
//
// DATABASE_URL selects the PostgreSQL server; unset, an embedded one runs in a
// temporary directory. BENCH_DURATION (seconds, default 10) sets each run's length;
// BENCH_CPU_PROF=dir has the server write a V8 CPU profile (--cpu-prof) into dir;
// BENCH_ROWS=recent,locations,healthz,refresh,calls-post runs only those rows (each
// with its baseline), in that order; calls-floor, only when named, adds the floor of POST /calls
// (bench/floors/calls-floor-server.js), recent-floor and locations-floor the floor of the two reads (bare Fastify
// sending the same answer, bench/floors/read-floor-server.js), and calls-post-idem and calls-post-unique, only when named, POST /calls
// with an Idempotency-Key and its control; calls-post-full, only when named, POST /calls with every optional
// field; BENCH_SERVER_DIR=checkout runs that checkout's server instead.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { openSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { issueSession } from '../src/auth/sessions.service.ts';
import { insertCompletedCall } from '../src/calls/completed-calls.queries.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool } from '../src/db/pool.ts';
import { withOrg } from '../src/db/with-org.ts';
import { withTransaction } from '../src/db/transaction.ts';
import { createLocation } from '../src/locations/locations.service.ts';
import { createClient } from '../src/oauth/clients.service.ts';
import { createGrant, issueTokenPair } from '../src/oauth/tokens.service.ts';
import { insertOrganization } from '../src/organizations/organizations.queries.ts';
import { createUser } from '../src/organizations/organizations.service.ts';
import { createSecretBox } from '../src/crypto/secret-box.ts';
import { subscribe } from '../src/webhooks/subscriptions.service.ts';
import { benchDatabase } from './bench-database.ts';
import { mcpBenchToken, mcpBudgetVerdict, mcpRowOptions } from './mcp-row.ts';
import { NO_CACHES } from '../src/cache/caches.ts';
import { freePort } from '../src/free-port.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CONNECTIONS = 50;
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CALLS = 10_000;
const LOCATIONS = 10;
/** Refresh chains: one per connection at a time, plus spares for chains a failed answer ends. */
const REFRESH_CHAINS = 400;
const TTLS = { accessTokenTtl: 3600, refreshTokenTtl: 5_184_000 };

interface Child {
  process: ChildProcess;
  url: string;
  /** Milliseconds from spawn to the first successful `ready` probe. */
  startupMs: number;
  log(): string;
  stop(): Promise<void>;
}

/** Spawns a server with its output in a file (never through this process), and waits until `readyPath` answers 200. */
/** Headers of a connection, not of an answer: the floor's own server sets them. */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'content-length', 'date', 'transfer-encoding']);

async function writeAnswers(dir: string, answers: object): Promise<string> {
  const file = path.join(dir, 'read-floor-answers.json');
  await writeFile(file, JSON.stringify(answers));
  return file;
}

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
    const ok = await fetch(url + readyPath).then(
      (r) => r.status === 200,
      () => false,
    );
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

/** One route's figures over its slices. */
interface Measured {
  /** Completed requests per second (2xx per second for refresh: rotations). */
  rate: number;
  okRate: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** CPU per request of the process answering (and of PostgreSQL, when it is embedded). */
  cpu?: CpuShare;
}

/** A row and the bare baseline measured in the same interleaved slices. */
interface Paired {
  row: Measured;
  baseline: Measured;
}

function line(name: string, m: Measured, cpuLabel: string, unit = 'req/s', rate = m.rate): string {
  const cpu = m.cpu
    ? `   CPU/req: ${cpuLabel} ${m.cpu.nodeUs.toFixed(0)} µs${m.cpu.postgresUs === undefined ? '' : `, PostgreSQL ${m.cpu.postgresUs.toFixed(0)} µs`}`
    : '';
  return `${name.padEnd(40)} ${rate.toFixed(0).padStart(7)} ${unit.padEnd(11)} p50 ${String(m.p50).padStart(3)} ms   p99 ${String(m.p99).padStart(3)} ms   non-2xx ${m.non2xx}   errors ${m.errors}${cpu}`;
}

/** autocannon's result of one slice, before aggregation (skipAggregateResult). */
interface RawResult {
  totalCompletedRequests: number;
  duration: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  '2xx': number;
}

const SLICES = 5;

/**
 * The row and the bare baseline in alternating slices (B R, R B, B R, R B,
 * B R: DURATION/5 seconds each, so each gets DURATION in all), after one
 * unmeasured second each (JIT, pool connections, prepared statements).
 * Measured one after the other, the first of two runs met a quieter or
 * busier machine than the second, and whichever ran first was favoured or
 * not by chance (a 0.80× /healthz one run, 0.98× the next); interleaved,
 * both see the same machine. Each side's CPU per request counts only its
 * own slices: unlike req/s, it holds still when other work shares the
 * machine. p50/p99 come from the slices' merged latency histograms.
 */
async function measurePaired(
  options: Parameters<typeof autocannon>[0],
  baselineOptions: Parameters<typeof autocannon>[0],
  processes: { serverPid: number; barePid: number; pgdata: string | undefined },
): Promise<Paired> {
  await autocannon({ ...baselineOptions, duration: 1 });
  await autocannon({ ...options, duration: 1 });
  const sides = {
    row: {
      options,
      raws: [] as RawResult[],
      nodeTicks: 0,
      pgTicks: 0 as number | undefined,
      pid: processes.serverPid,
      pgdata: processes.pgdata,
    },
    baseline: {
      options: baselineOptions,
      raws: [] as RawResult[],
      nodeTicks: 0,
      pgTicks: undefined as number | undefined,
      pid: processes.barePid,
      pgdata: undefined,
    },
  };
  for (let i = 0; i < SLICES; i++) {
    for (const side of i % 2 === 0 ? [sides.baseline, sides.row] : [sides.row, sides.baseline]) {
      const node0 = cpuTicks(side.pid);
      const pg0 = postgresTicks(side.pgdata);
      side.raws.push(
        (await autocannon({ ...side.options, duration: DURATION / SLICES, skipAggregateResult: true })) as unknown as RawResult,
      );
      side.nodeTicks += cpuTicks(side.pid) - node0;
      const pg1 = postgresTicks(side.pgdata);
      side.pgTicks = pg0 === undefined || pg1 === undefined || side.pgTicks === undefined ? undefined : side.pgTicks + pg1 - pg0;
    }
  }
  const summarise = (side: typeof sides.row): Measured => {
    const sum = (f: (r: RawResult) => number) => side.raws.reduce((a, r) => a + f(r), 0);
    const requests = sum((r) => r.totalCompletedRequests) || 1;
    const seconds = sum((r) => r.duration);
    const us = (ticks: number) => (ticks * 1e6) / TICKS_PER_SECOND / requests;
    const latency = autocannon.aggregateResult(side.raws as never, side.options).latency;
    return {
      rate: requests / seconds,
      okRate: sum((r) => r['2xx']) / seconds,
      p50: latency.p50,
      p99: latency.p99,
      non2xx: sum((r) => r.non2xx),
      errors: sum((r) => r.errors + r.timeouts),
      cpu: { nodeUs: us(side.nodeTicks), postgresUs: side.pgTicks === undefined ? undefined : us(side.pgTicks) },
    };
  };
  return { row: summarise(sides.row), baseline: summarise(sides.baseline) };
}

/** Every request presents a current refresh token and returns the successor to the pool. */
function refreshRequests(chains: string[], basic: string) {
  return [
    {
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
    },
  ];
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
    const pair = async () =>
      withTransaction(pool, async (tx) => {
        const grant = await createGrant(tx, {
          clientUuid: client.client.id,
          userId: user.id,
          organizationId: org.id,
          scopes: ['calls:read'],
        });
        return issueTokenPair(tx, TTLS, { grantId: grant.id, accessScopes: ['calls:read'], refreshScopes: ['calls:read'] });
      });
    const tokens = await pair();
    const chains: string[] = [];
    for (let i = 0; i < REFRESH_CHAINS; i++) chains.push((await pair()).refresh_token);
    await withOrg(pool, org.id, async (tx) => {
      for (let i = 0; i < CALLS; i++)
        await insertCompletedCall(tx, { agentId: null, summary: `Bench call ${i}`, durationSeconds: i % 600 });
    });
    const locationIds: string[] = [];
    for (let i = 0; i < LOCATIONS; i++) {
      const location = await createLocation(pool, NO_CACHES, org.id, {
        name: `Location ${i}`,
        city: 'Springfield',
        country: 'US',
        is_primary: i === 0,
      } as never);
      locationIds.push(location.id);
    }
    // POST /calls row: one active subscription, so every call writes its outbox
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
    closers.push(
      () =>
        new Promise<void>((resolve) => {
          silent.close(() => resolve());
          for (const socket of held) socket.destroy();
        }),
    );
    const hookGrant = await withTransaction(pool, (tx) =>
      createGrant(tx, { clientUuid: client.client.id, userId: user.id, organizationId: org.id, scopes: ['calls:read'] }),
    );
    await subscribe(
      { pool, secretBox: createSecretBox(secretKey), urlCheck: { allowPrivate: true, allowedPorts: '*' }, maxSubscriptions: 1 },
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
      MCP_RATE_LIMIT: '100000000/min',
      // Trace export, when the bench is run with it (docs/performance.md, "Traces").
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('OTEL_'))),
    };
    const bare = await startChild(
      'bare',
      [path.join(ROOT, 'bench/floors/bare-server.js'), '$PORT'],
      { PATH: process.env.PATH },
      '/',
      logDir,
    );
    children.push(bare);
    // BENCH_CPU_PROF=dir: the server writes a V8 CPU profile there when it stops.
    const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`] : [];
    // BENCH_SERVER_DIR: another checkout's server (say, the code before a change) against the same data and load.
    const serverBin = path.join(path.resolve(process.env.BENCH_SERVER_DIR ?? ROOT), 'bin/switchboard.js');
    const server = await startChild('serve', [...profile, serverBin, 'serve'], serverEnv, '/readyz', logDir);
    children.push(server);

    const platform = {
      authorization: `Bearer ${tokens.access_token}`,
      'x-client-id': client.client_id,
      'x-client-secret': client.client_secret,
    };
    const user_ = { 'x-user-token': session.token };
    // Each read's answer as sent (headers and body), for the read floor (read-floor-server.js).
    const answers: Record<string, { headers: Record<string, string>; body: string }> = {};
    for (const [p, h] of [
      ['/calls/recent', platform],
      ['/locations', user_],
    ] as const) {
      const probe = await fetch(server.url + p, { headers: h });
      const body = await probe.text();
      if (probe.status !== 200) throw new Error(`${p} answered ${probe.status} to the benchmark's credentials: ${body}`);
      const headers = Object.fromEntries([...probe.headers].filter(([name]) => !HOP_HEADERS.has(name)));
      answers[p] = { headers, body };
    }

    process.stdout.write(
      `bench:api — autocannon ${CONNECTIONS} connections, ${DURATION}s per row and ${DURATION}s of bare Fastify interleaved with it` +
        ` (${SLICES} slices each, +1s warm-up each), server and baseline in their own processes\n`,
    );
    const idleRss = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${server.process.pid}/status`, 'utf8'))?.[1];
    process.stdout.write(
      `serve: ready (/readyz 200) ${server.startupMs.toFixed(0)} ms after spawn; idle resident memory ${(Number(idleRss) / 1024).toFixed(0)} MiB\n`,
    );
    const processes = { serverPid: server.process.pid!, barePid: bare.process.pid!, pgdata: db.pgdata };
    // BENCH_ROWS=calls-floor: the floor of the POST /calls row (bench/floors/calls-floor-server.js), a bound, not a product.
    const floor = process.env.BENCH_ROWS?.split(',').includes('calls-floor')
      ? await startChild(
          'calls-floor',
          [path.join(ROOT, 'bench/floors/calls-floor-server.js'), '$PORT'],
          { PATH: process.env.PATH, DATABASE_URL: db.url },
          '/',
          logDir,
        )
      : undefined;
    if (floor) children.push(floor);
    // BENCH_ROWS=recent-floor,locations-floor: bare Fastify sending the reads' own answers (bench/floors/read-floor-server.js).
    const readFloor = ['recent-floor', 'locations-floor'].some((key) => process.env.BENCH_ROWS?.split(',').includes(key))
      ? await startChild(
          'read-floor',
          [path.join(ROOT, 'bench/floors/read-floor-server.js'), '$PORT', await writeAnswers(logDir, answers)],
          { PATH: process.env.PATH },
          '/',
          logDir,
        )
      : undefined;
    if (readFloor) children.push(readFloor);
    const baselineOptions = { url: `${bare.url}/`, connections: CONNECTIONS };
    // BENCH_ROWS=recent,refresh (say) runs only those rows (each with its own interleaved baseline), e.g. to profile one route.
    const only = process.env.BENCH_ROWS?.split(',');
    const ratios: string[] = [];
    const verdict = (ok: boolean) => (ok ? 'ok' : 'BELOW GOAL');
    // The POST /calls rows (Switchboard's and its floor's) send the same completed call.
    const callBody = JSON.stringify({ summary: 'Customer booked a visit for next Tuesday', duration_seconds: 184 });
    // calls-post-full: the same call with every optional field a voice service may give (docs/interface.md §2.6).
    const fullCallBody = JSON.stringify({
      summary: 'Customer booked a visit for next Tuesday',
      duration_seconds: 184,
      direction: 'inbound',
      from_number: '+44 20 7946 0123',
      to_number: '+1 (415) 555-0199',
      location_id: locationIds[0],
      recording_url: 'https://recordings.example.com/2026/11/29/call-8f14e45f.mp3',
      transcript: 'Agent: Good morning, how can I help? Caller: I would like to book a visit for next Tuesday. '.repeat(16),
      metadata: { crm_id: 'A-10442', campaign: 'winter-service' },
    });
    const basic = Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64');
    const rows: {
      key: string;
      name: string;
      options: Parameters<typeof autocannon>[0];
      unit?: string;
      serverPid?: number;
      goal: (p: Paired, ratio: number) => string;
    }[] = [
      {
        key: 'healthz',
        name: 'GET /healthz',
        options: { url: `${server.url}/healthz`, connections: CONNECTIONS },
        goal: (_p, r) => `healthz ${r.toFixed(2)}× (goal ≥0.9, ${verdict(r >= 0.9)})`,
      },
      {
        key: 'recent',
        name: `GET /calls/recent (3 headers, ${CALLS / 1000}k calls)`,
        options: { url: `${server.url}/calls/recent`, connections: CONNECTIONS, headers: platform },
        goal: (p, r) => `calls/recent ${r.toFixed(2)}× p99 ${p.row.p99} ms (goal ≥0.5, p99 ≤20, ${verdict(r >= 0.5 && p.row.p99 <= 20)})`,
      },
      {
        key: 'locations',
        name: 'GET /locations (x-user-token)',
        options: { url: `${server.url}/locations`, connections: CONNECTIONS, headers: user_ },
        goal: (p, r) => `locations ${r.toFixed(2)}× p99 ${p.row.p99} ms (goal ≥0.5, ${verdict(r >= 0.5)})`,
      },
      {
        key: 'refresh',
        name: 'POST /oauth/token (refresh, rotation)',
        unit: 'rotations/s',
        options: { url: server.url, connections: CONNECTIONS, requests: refreshRequests(chains, basic) },
        goal: (p) => `refresh ${p.row.okRate.toFixed(0)}/s (goal ≥1000, ${verdict(p.row.okRate >= 1000)})`,
      },
      {
        key: 'calls-post',
        name: 'POST /calls (completed, 1 subscription)',
        options: {
          url: `${server.url}/calls`,
          connections: CONNECTIONS,
          method: 'POST',
          headers: { ...user_, 'content-type': 'application/json' },
          body: callBody,
        },
        goal: (_p, r) => `POST /calls ${r.toFixed(2)}× (goal ≥0.15, ${verdict(r >= 0.15)})`,
      },
      // Only when named: the calls-post row with every optional field set (its cost beside calls-post's).
      ...(only?.includes('calls-post-full')
        ? [
            {
              key: 'calls-post-full',
              name: 'POST /calls (completed, every optional field)',
              options: {
                url: `${server.url}/calls`,
                connections: CONNECTIONS,
                method: 'POST' as const,
                headers: { ...user_, 'content-type': 'application/json' },
                body: fullCallBody,
              },
              goal: (_p: Paired, r: number) => `POST /calls, every field ${r.toFixed(2)}× (compare its CPU with calls-post)`,
            },
          ]
        : []),
      // Only when named: the calls-post row with a new Idempotency-Key on every request, and its control: the
      // same per-request header rebuilt by the load generator (autocannon's [<id>]), but not an Idempotency-Key.
      ...(['calls-post-idem', 'calls-post-unique'] as const)
        .filter((key) => only?.includes(key))
        .map((key) => ({
          key,
          name: key === 'calls-post-idem' ? 'POST /calls (as above, Idempotency-Key)' : 'POST /calls (as above, x-bench-id)',
          options: {
            url: `${server.url}/calls`,
            connections: CONNECTIONS,
            method: 'POST' as const,
            idReplacement: true,
            headers: {
              ...user_,
              'content-type': 'application/json',
              [key === 'calls-post-idem' ? 'idempotency-key' : 'x-bench-id']: '[<id>]',
            },
            body: callBody,
          },
          goal: (_p: Paired, r: number) =>
            `${key} ${r.toFixed(2)}× (${key === 'calls-post-idem' ? 'compare with calls-post-unique' : 'the control of calls-post-idem'})`,
        })),
      ...(floor
        ? [
            {
              key: 'calls-floor',
              name: 'POST /calls floor (bench/floors/)',
              serverPid: floor.process.pid!,
              options: {
                url: `${floor.url}/calls`,
                connections: CONNECTIONS,
                method: 'POST' as const,
                headers: { 'content-type': 'application/json' },
                body: callBody,
              },
              goal: (_p: Paired, r: number) => `POST /calls floor ${r.toFixed(2)}× (a bound for the 0.15 goal)`,
            },
          ]
        : []),
      ...(readFloor
        ? (
            [
              ['recent-floor', '/calls/recent', 0.5],
              ['locations-floor', '/locations', 0.5],
            ] as const
          ).map(([key, route, goal]) => ({
            key,
            name: `GET ${route} floor (bench/floors/, the same answer)`,
            serverPid: readFloor.process.pid!,
            options: { url: `${readFloor.url}${route}`, connections: CONNECTIONS },
            goal: (_p: Paired, r: number) => `GET ${route} floor ${r.toFixed(2)}× (a bound for the ${goal} goal)`,
          }))
        : []),
    ];
    // In BENCH_ROWS order when named, so two rows can be compared in both orders.
    if (only) rows.sort((x, y) => only.indexOf(x.key) - only.indexOf(y.key));
    for (const spec of rows) {
      if (only && !only.includes(spec.key)) continue;
      const paired = await measurePaired(spec.options, baselineOptions, { ...processes, serverPid: spec.serverPid ?? processes.serverPid });
      const ratio = paired.row.rate / paired.baseline.rate;
      const rate = spec.unit ? paired.row.okRate : paired.row.rate;
      process.stdout.write(`${line(spec.name, paired.row, 'server', spec.unit, rate)}   ${ratio.toFixed(2)}× bare\n`);
      process.stdout.write(`${line('  GET / (bare Fastify, same slices)', paired.baseline, 'bare')}\n`);
      ratios.push(spec.goal(paired, ratio));
    }
    if (!only || only.includes('mcp')) {
      const token = await mcpBenchToken(pool, TTLS, { baseUrl: server.url, userId: user.id, organizationId: org.id });
      const recent = { url: `${server.url}/calls/recent`, connections: CONNECTIONS, headers: platform };
      const paired = await measurePaired(mcpRowOptions(server.url, token, CONNECTIONS), recent, {
        ...processes,
        barePid: processes.serverPid,
      });
      process.stdout.write(`${line('POST /mcp tools/call list_recent_calls', paired.row, 'server')}\n`);
      process.stdout.write(`${line('  GET /calls/recent (same server, same slices)', paired.baseline, 'server')}\n`);
      ratios.push(mcpBudgetVerdict(paired.row.cpu!.nodeUs, paired.baseline.cpu!.nodeUs));
    }
    const memory = await fetch(`${server.url}/metrics`)
      .then((r) => r.text())
      .then((t) => /^switchboard_process_resident_memory_bytes (\S+)/m.exec(t)?.[1]);
    if (memory) process.stdout.write(`serve: resident memory after the runs ${(Number(memory) / 2 ** 20).toFixed(0)} MiB\n`);
    process.stdout.write(`ratio vs bare (same slices): ${ratios.join(' | ')}\n`);
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
