// npm run bench:delivery [-- --calls N --subscriptions M --backlog B --cpu-prof DIR --peer --pairs P --idle I]
//
// End-to-end webhook delivery, each side in its own process, as a user would
// run it:
//   - this process: setup, then the load generator (completed calls through
//     the calls service, as POST /calls makes them after authentication; the
//     route itself is measured by bench:api);
//   - `switchboard worker` (the delivery worker), default settings apart from
//     allowing loopback targets;
//   - the receivers (bench/delivery-targets.js): M HTTPS servers, one per
//     subscription, reporting each receipt's time;
//   - the baseline (bench/floors/raw-post-loop.js): undici POSTing the same number of
//     bodies of the same size to the same receivers, at the concurrency the
//     worker may use (10 per subscription), and one at a time; warmed up with
//     as many untimed requests as the worker is sent before it is timed.
// It prints, from the completion's commit (the call and its outbox rows) to
// the receiver reading the delivery:
//   1. idle latency: one call at a time, all its deliveries received before the next;
//   2. burst: N calls completed by 8 concurrent clients, deliveries/s until the last receipt;
//   3. with --backlog B: the drain rate of D (--drain, default 10,000) due
//      deliveries on an otherwise empty table, then of the first D of B/10 due
//      with B more rows in webhook_deliveries (the rest delivered, failed or
//      scheduled a day later), and the claim's round trip and EXPLAIN
//      (ANALYZE, BUFFERS) times at both sizes (BENCH_SHOW_PLANS=1 prints the plans);
// and a final `ratio` line with each figure beside its goal.
//
// --peer adds graphile-worker 0.17.3 doing the same deliveries
// (bench/peer/graphile-worker.ts, its own process, the same receivers and
// PostgreSQL; from the commit of the call and its jobs to the receipt): both
// workers run throughout, and the idle and burst phases alternate between
// them for P pairs (default 4; I idle calls, default 500), the side that goes
// first swapping every pair. It prints each pair and the medians, as ratios
// beside the goals (idle p50 ≤ the peer's, p99 ≤ 1.1 × the peer's, burst
// ≥ 3 × the peer's).
//
// DATABASE_URL selects the PostgreSQL server; unset, an embedded one runs in a
// temporary directory. --cpu-prof DIR has the worker write a V8 CPU profile there.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { openSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createCall } from '../src/calls/calls.service.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool, type Pool } from '../src/db/pool.ts';
import { withTransaction } from '../src/db/transaction.ts';
import { createClient } from '../src/oauth/clients.service.ts';
import { createGrant } from '../src/oauth/tokens.service.ts';
import { insertOrganization } from '../src/organizations/organizations.queries.ts';
import { createUser } from '../src/organizations/organizations.service.ts';
import { claimDue, claimStatements } from '../src/webhooks/worker/claim.queries.ts';
import { MAX_IN_FLIGHT_PER_SUBSCRIPTION, SLOW_ATTEMPT_MS } from '../src/webhooks/worker/endpoint-health.ts';
import { createSecretBox } from '../src/crypto/secret-box.ts';
import { subscribe } from '../src/webhooks/subscriptions.service.ts';
import { generateTestTls } from '../test/helpers/tls-certificates.ts';
import { WALK } from '../src/webhooks/worker/claim-candidates.ts';
import { benchDatabase } from './bench-database.ts';
import { cpuSeconds, postmasterOf, serverCpuSeconds } from './process-cpu.ts';
import { runRawLoop } from './floors/raw-loop.ts';
import { completePeerCall, setUpPeer } from './peer/graphile-jobs.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: {
    calls: { type: 'string', default: '2000' },
    subscriptions: { type: 'string', default: '5' },
    backlog: { type: 'string', default: '0' },
    drain: { type: 'string', default: '10000' },
    'cpu-prof': { type: 'string' },
    peer: { type: 'boolean', default: false },
    pairs: { type: 'string' },
    idle: { type: 'string' },
  },
});
const CALLS = Number(args.calls);
const SUBSCRIPTIONS = Number(args.subscriptions);
const BACKLOG = Number(args.backlog);
const DRAIN = Number(args.drain);
const PEER = args.peer;
const PAIRS = PEER ? Number(args.pairs ?? 4) : 1;
const IDLE_CALLS = Number(args.idle ?? (PEER ? 500 : Math.min(CALLS, 100)));
const COMPLETERS = 8;
const CONCURRENCY = Math.min(64, SUBSCRIPTIONS * MAX_IN_FLIGHT_PER_SUBSCRIPTION);

const now = () => performance.timeOrigin + performance.now();

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

interface Summary {
  p50: number;
  p99: number;
  rate: number;
}

function summarize(latencies: number[], elapsedMs: number, count = latencies.length): Summary {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), rate: count / (elapsedMs / 1000) };
}

function line(label: string, s: Summary): string {
  const ms = (value: number) => (Number.isNaN(value) ? '' : `${value.toFixed(1)} ms`).padStart(10);
  return `  ${label.padEnd(52)} p50 ${ms(s.p50)}  p99 ${ms(s.p99)}  ${s.rate.toFixed(0).padStart(6)} /s`;
}

/**
 * `perSecond`: the phase's deliveries (or requests) per second. The busy share
 * (total × rate over what the CPUs give) says whether the phase was bound by
 * CPU (near 100 %) or by waiting (slots held on round trips and commits).
 */
function cpuLine(label: string, c: { generator: number; worker: number; receivers: number; database: number }, perSecond: number): string {
  const ms = (value: number) => (Number.isNaN(value) ? '—' : value.toFixed(3)).padStart(7);
  const total = [c.generator, c.worker, c.receivers, c.database].filter((v) => !Number.isNaN(v)).reduce((a, b) => a + b, 0);
  const busy = (total * perSecond) / (os.cpus().length * 1000);
  return (
    `  ${label.padEnd(16)} load generator ${ms(c.generator)}  worker ${ms(c.worker)}  PostgreSQL ${ms(c.database)}  receivers ${ms(c.receivers)}  total ${ms(total)}` +
    `  (CPUs ${(busy * 100).toFixed(0).padStart(3)} % busy)`
  );
}

interface Child {
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Spawns `node <args>` with its output in a log file; resolves once `ready` says so of the log, within `timeoutMs`. */
async function startLogged(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  logFile: string,
  ready: (log: string) => boolean | Promise<boolean>,
  timeoutMs: number,
): Promise<Child> {
  const fd = openSync(logFile, 'w');
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', fd, fd] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const started = performance.now();
  const log = () => readFileSync(logFile, 'utf8');
  while (!(await ready(log()))) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}:\n${log()}`);
    if (performance.now() - started > timeoutMs) throw new Error(`${name} not ready within ${timeoutMs / 1000} s:\n${log()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return {
    process: child,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** `switchboard <command>` in its own process; resolves once `ready` says so of its log. */
function startSwitchboard(
  command: string[],
  env: NodeJS.ProcessEnv,
  logFile: string,
  ready: (log: string) => boolean | Promise<boolean>,
  nodeArgs: string[] = [],
): Promise<Child> {
  const args = [...nodeArgs, path.join(ROOT, 'bin/switchboard.js'), ...command];
  return startLogged(`switchboard ${command.join(' ')}`, args, env, logFile, ready, 120_000);
}

/** The graphile-worker peer (bench/peer/graphile-worker.ts) in its own process, through tsx; resolves once it listens. */
function startPeer(env: NodeJS.ProcessEnv, logFile: string): Promise<Child> {
  const args = ['--import', 'tsx', path.join(ROOT, 'bench/peer/graphile-worker.ts')];
  const peerEnv = { ...env, PEER_CONCURRENCY: String(CONCURRENCY) };
  return startLogged('the peer worker', args, peerEnv, logFile, (log) => log.includes('peer worker running'), 60_000);
}

/** Fills webhook_deliveries: `due` pending and due now, `other` delivered, failed or scheduled a day later, spread over the subscriptions. */
async function loadRows(pool: Pool, organizationId: string, subscriptionIds: string[], due: number, other: number): Promise<void> {
  const chunk = 50_000;
  for (let done = 0; done < due + other; done += chunk) {
    const size = Math.min(chunk, due + other - done);
    const dueHere = Math.max(0, Math.min(size, due - done));
    const callCount = Math.ceil(size / subscriptionIds.length);
    // n numbers each call's deliveries together ((call - 1) × subscriptions +
    // subscription), so the first `dueHere` rows are due for every subscription
    // alike. (A row_number() over the cross join followed the plan's order: one
    // subscription's rows after another's, and a chunk's due rows could all
    // belong to two of the five subscriptions.)
    await pool.query(
      `WITH c AS (
         INSERT INTO calls (organization_id, status, completed_at, summary, duration_seconds)
         SELECT $1, 'completed', now(), 'backlog', 1 FROM generate_series(1, $2) RETURNING id
       ), numbered_calls AS (
         SELECT c.id, row_number() OVER () AS k FROM c
       ), numbered AS (
         SELECT nc.id AS call_id, s.id AS subscription_id, (nc.k - 1) * cardinality($3::uuid[]) + s.position AS n
           FROM numbered_calls nc CROSS JOIN unnest($3::uuid[]) WITH ORDINALITY AS s(id, position)
       )
       INSERT INTO webhook_deliveries (organization_id, subscription_id, call_id, event, body, status, attempts, next_attempt_at, finished_at)
       SELECT $1, subscription_id, call_id, 'call.completed', '{"id":"' || call_id || '","summary":"backlog"}',
              CASE WHEN n <= $4 THEN 'pending' WHEN n % 3 = 0 THEN 'pending' WHEN n % 3 = 1 THEN 'succeeded' ELSE 'failed' END,
              CASE WHEN n <= $4 THEN 0 ELSE 1 END,
              CASE WHEN n <= $4 THEN now() - interval '1 second' ELSE now() + interval '1 day' END,
              CASE WHEN n <= $4 OR n % 3 = 0 THEN NULL ELSE now() END
         FROM numbered WHERE n <= $5`,
      [organizationId, callCount, subscriptionIds, dueHere, size],
    );
  }
  await pool.query('VACUUM ANALYZE webhook_deliveries');
  await pool.query('ANALYZE calls');
}

/** The claim measured without sending anything: round trips rolled back, and each statement's EXPLAIN (ANALYZE, BUFFERS). */
async function measureClaim(pool: Pool): Promise<{ roundTripMs: number; executionMs: number[]; seqScan: boolean }> {
  const input = {
    limit: CONCURRENCY,
    degradedLimit: CONCURRENCY,
    maxSubscriptions: Math.min(50, CONCURRENCY),
    maxInFlight: MAX_IN_FLIGHT_PER_SUBSCRIPTION,
    leaseMs: 60_000,
    slowMs: SLOW_ATTEMPT_MS,
    hints: [],
    cursor: null,
    walk: WALK,
    degraded: [],
  };
  const client = await pool.connect();
  try {
    const times: number[] = [];
    for (let i = 0; i < 21; i++) {
      await client.query('BEGIN');
      const started = performance.now();
      await claimDue(client, input);
      times.push(performance.now() - started);
      await client.query('ROLLBACK');
    }
    const executionMs: number[] = [];
    let seqScan = false;
    await client.query('BEGIN');
    const { subscriptions, leases, nextDue } = claimStatements(input);
    for (const statement of [subscriptions, leases, nextDue]) {
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${statement}`);
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      if (/Seq Scan on webhook_deliveries/.test(plan)) seqScan = true;
      executionMs.push(Number(/Execution Time: ([\d.]+)/.exec(plan)?.[1]));
      if (process.env.BENCH_SHOW_PLANS) process.stdout.write(`${plan}\n\n`);
    }
    await client.query('ROLLBACK');
    return {
      roundTripMs: percentile(
        times.sort((a, b) => a - b),
        50,
      ),
      executionMs,
      seqScan,
    };
  } finally {
    client.release();
  }
}

async function main() {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'switchboard-bench-delivery-'));
  const database = await benchDatabase();
  const pool = createPool(database.url, 10);
  const children: Child[] = [];
  let targets: ChildProcess | undefined;
  try {
    const tls = await generateTestTls(tmp);
    await migrate(pool);
    const secretKey = randomBytes(32);
    const org = await insertOrganization(pool, 'Bench Org');
    const user = await createUser(pool, { email: 'bench@example.com', password: 'bench-password', organizationId: org.id, role: 'owner' });
    const client = await createClient(pool, { name: 'Bench Platform', redirectUris: ['https://bench.example/cb'] });
    const grant = await withTransaction(pool, (tx) =>
      createGrant(tx, { clientUuid: client.client.id, userId: user.id, organizationId: org.id, scopes: ['calls:read'] }),
    );

    // The receivers, and a map from call id to its commit time.
    const committed = new Map<string, number>();
    const latencies: number[] = [];
    let receipts = 0;
    let waiter: { count: number; resolve: () => void } | undefined;
    targets = fork(path.join(ROOT, 'bench/delivery-targets.js'), [tls.certPath, tls.keyPath, String(SUBSCRIPTIONS)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: [],
    });
    const urls = await new Promise<string[]>((resolve) => {
      targets!.on('message', (message: { type: string; urls?: string[]; items?: [string, number][] }) => {
        if (message.type === 'ready') resolve(message.urls!);
        if (message.type !== 'received') return;
        for (const [id, at] of message.items!) {
          receipts++;
          const start = committed.get(id);
          if (start !== undefined) latencies.push(at - start);
        }
        if (waiter && receipts >= waiter.count) waiter.resolve();
      });
    });
    const receiptsReach = (count: number) =>
      new Promise<void>((resolve) => {
        if (receipts >= count) resolve();
        else waiter = { count, resolve };
      });

    const secretBox = createSecretBox(secretKey);
    const principal = {
      kind: 'oauth' as const,
      userId: user.id,
      organizationId: org.id,
      scopes: ['calls:read'],
      clientId: client.client_id,
      grantId: grant.id,
    };
    const subscriptionIds: string[] = [];
    for (const url of urls) {
      const deps = { pool, secretBox, urlCheck: { allowPrivate: true, allowedPorts: '*' as const }, maxSubscriptions: urls.length };
      const hook = await subscribe(deps, principal, {
        hookUrl: url,
        secret: 'bench-secret',
      });
      subscriptionIds.push(hook.subscription.id);
    }

    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: database.url,
      SECRET_KEY: secretKey.toString('base64'),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_ALLOWED_PORTS: '*',
      LOG_LEVEL: 'warn',
      NODE_EXTRA_CA_CERTS: tls.caCertPath,
      // Trace export, when the bench is run with it (docs/performance.md, "Traces").
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('OTEL_'))),
    };
    const profile = args['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(args['cpu-prof'])}`] : [];
    const startWorker = async () => {
      const worker = await startSwitchboard(
        ['worker'],
        env,
        path.join(tmp, `worker-${children.length}.log`),
        (log) => log.includes('Switchboard worker running'),
        profile,
      );
      children.push(worker);
      return worker;
    };
    let worker = await startWorker();

    // CPU seconds per process, to give each phase's cost per delivery (see process-cpu.ts).
    const {
      rows: [backend],
    } = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const postmaster = postmasterOf(backend!.pid);
    const cpu = (workerPid: number) => {
      const self = process.cpuUsage();
      return {
        generator: (self.user + self.system) / 1e6,
        worker: cpuSeconds(workerPid),
        receivers: cpuSeconds(targets!.pid!),
        database: postmaster ? serverCpuSeconds(postmaster) : NaN,
      };
    };
    type Cpu = ReturnType<typeof cpu>;
    const cpuSpent = (before: Cpu, after: Cpu) =>
      Object.fromEntries(Object.entries(after).map(([key, value]) => [key, value - before[key as keyof Cpu]])) as Cpu;
    const cpuPerDelivery = (spent: Cpu[], deliveries: number) =>
      Object.fromEntries(
        Object.keys(spent[0]!).map((key) => [key, (spent.reduce((sum, c) => sum + c[key as keyof Cpu], 0) * 1000) / deliveries]),
      ) as Cpu;

    // The load generator completes calls through the calls service on its own pool (what
    // POST /calls does after authentication; bench:api measures that route), so the burst
    // measures delivery, not the API's ingest. The peer's calls are written with their jobs
    // in one statement (bench/peer/graphile-jobs.ts). Either way the clock starts at the commit.
    interface Side {
      name: string;
      pid(): number;
      complete(i: number): Promise<void>;
      idle: Summary[];
      burst: Summary[];
      ingest: Summary[];
      idleCpu: Cpu[];
      burstCpu: Cpu[];
    }
    const side = (name: string, pid: () => number, write: (i: number) => Promise<string>): Side => ({
      name,
      pid,
      async complete(i) {
        const id = await write(i);
        committed.set(id, now());
      },
      idle: [],
      burst: [],
      ingest: [],
      idleCpu: [],
      burstCpu: [],
    });
    const callOf = (i: number) => ({ summary: `Bench call ${i}: customer asked for a visit next week`, duration_seconds: 60 + (i % 600) });
    const ours = side(
      'Switchboard',
      () => worker.process.pid!,
      async (i) => (await createCall(pool, org.id, callOf(i))).id,
    );
    const sides = [ours];
    let peerWorker: Child | undefined;
    if (PEER) {
      await setUpPeer(database.url, pool);
      peerWorker = await startPeer(env, path.join(tmp, 'peer.log'));
      children.push(peerWorker);
      sides.push(
        side(
          'graphile-worker',
          () => peerWorker!.process.pid!,
          (i) => completePeerCall(pool, urls, { summary: callOf(i).summary, durationSeconds: callOf(i).duration_seconds }),
        ),
      );
    }
    /** `count` calls, as fast as COMPLETERS clients complete them. */
    const completeTogether = async (s: Side, count: number) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: COMPLETERS }, async () => {
          while (next < count) await s.complete(next++);
        }),
      );
    };
    // Outcomes and job completions written after the last receipt settle before the other side is timed.
    const settle = () => new Promise((resolve) => setTimeout(resolve, 500));

    // Warm-up: connections, TLS sessions, prepared statements, and the JIT: a
    // short burst first, so that every process is measured as a service that
    // has been running a while (after only a few calls the worker and the
    // receivers spent about twice the CPU per delivery, most of it compiling;
    // docs/performance.md), then a few calls one at a time.
    const warmUp = Math.min(CALLS, 400);
    for (const s of sides) {
      const base = receipts;
      await completeTogether(s, warmUp);
      for (let i = 0; i < 20; i++) await s.complete(warmUp + i);
      await receiptsReach(base + (warmUp + 20) * SUBSCRIPTIONS);
      await settle();
    }
    latencies.length = 0;

    // 1. Idle: the worker is idle when each call commits.
    const idlePhase = async (s: Side) => {
      const base = receipts;
      const started = performance.now();
      const cpuAt = cpu(s.pid());
      for (let i = 0; i < IDLE_CALLS; i++) {
        await s.complete(i);
        await receiptsReach(base + (i + 1) * SUBSCRIPTIONS);
      }
      s.idle.push(summarize(latencies.splice(0), performance.now() - started));
      s.idleCpu.push(cpuSpent(cpuAt, cpu(s.pid())));
      await settle();
    };

    // 2. Burst: N calls as fast as 8 clients complete them.
    const burstPhase = async (s: Side) => {
      const base = receipts;
      const started = performance.now();
      const cpuAt = cpu(s.pid());
      await completeTogether(s, CALLS);
      const ingestMs = performance.now() - started;
      await receiptsReach(base + CALLS * SUBSCRIPTIONS);
      s.burst.push(summarize(latencies.splice(0), performance.now() - started));
      s.burstCpu.push(cpuSpent(cpuAt, cpu(s.pid())));
      s.ingest.push({ p50: NaN, p99: NaN, rate: CALLS / (ingestMs / 1000) });
      await settle();
    };

    // Interleaved: each pair runs both sides' idle phase, then both sides' burst, the first side swapping every pair.
    for (let pair = 0; pair < PAIRS; pair++) {
      const order = pair % 2 === 0 ? sides : [...sides].reverse();
      for (const s of order) await idlePhase(s);
      for (const s of order) await burstPhase(s);
    }
    const median = (values: number[]) => {
      const sorted = [...values].sort((a, b) => a - b);
      const mid = Math.floor(sorted.length / 2);
      return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
    };
    const medianOf = (summaries: Summary[]): Summary => ({
      p50: median(summaries.map((s) => s.p50)),
      p99: median(summaries.map((s) => s.p99)),
      rate: median(summaries.map((s) => s.rate)),
    });
    const idle = medianOf(ours.idle);
    const burst = medianOf(ours.burst);
    const ingest = medianOf(ours.ingest);
    const idleCpu = cpuPerDelivery(ours.idleCpu, PAIRS * IDLE_CALLS * SUBSCRIPTIONS);
    const burstCpu = cpuPerDelivery(ours.burstCpu, PAIRS * CALLS * SUBSCRIPTIONS);
    // 3. The same POSTs without Switchboard (the workers are stopped meanwhile).
    await worker.stop();
    await peerWorker?.stop();
    const {
      rows: [sample],
    } = await pool.query<{ n: number }>('SELECT avg(octet_length(body))::int AS n FROM webhook_deliveries');
    const rawEnv = { PATH: process.env.PATH, NODE_EXTRA_CA_CERTS: tls.caCertPath };
    // Warmed up as the worker was (the burst and the calls one at a time above), untimed.
    const rawWarmUp = (warmUp + 20) * SUBSCRIPTIONS;
    const rawSequential = await runRawLoop(
      urls,
      { total: IDLE_CALLS * SUBSCRIPTIONS, concurrency: 1, bodyBytes: sample!.n, warmUp: rawWarmUp },
      rawEnv,
    );
    const receiversPid = targets.pid!;
    let receiversBefore = NaN;
    const rawConcurrent = await runRawLoop(
      urls,
      { total: CALLS * SUBSCRIPTIONS, concurrency: CONCURRENCY, bodyBytes: sample!.n, warmUp: rawWarmUp },
      rawEnv,
      () => (receiversBefore = cpuSeconds(receiversPid)),
    );
    const rawReceiversMs = ((cpuSeconds(receiversPid) - receiversBefore) * 1000) / (CALLS * SUBSCRIPTIONS);
    const rawSeq = summarize(rawSequential.latencies, rawSequential.elapsedMs);
    const raw = summarize(rawConcurrent.latencies, rawConcurrent.elapsedMs);

    const out = [
      `bench:delivery — ${CALLS} calls × ${SUBSCRIPTIONS} subscriptions, local HTTPS receivers; worker, receivers, baseline and load generator in separate processes (Node ${process.version}, ${os.cpus().length} CPUs, ${process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded PostgreSQL'})`,
      '',
      `call completed (call + outbox committed) → receiver read the delivery${PAIRS > 1 ? ` (medians of ${PAIRS} pairs)` : ''}:`,
      line(`idle, one call at a time (${IDLE_CALLS * SUBSCRIPTIONS} deliveries)`, idle),
      line(`burst, ${COMPLETERS} clients (${CALLS * SUBSCRIPTIONS} deliveries)`, burst),
      line(`  of which completing the ${CALLS} calls`, ingest),
      'raw undici POST to the same receivers (request → response), separate process:',
      line(`sequential (${IDLE_CALLS * SUBSCRIPTIONS} requests)`, rawSeq),
      line(`${CONCURRENCY} concurrent (${CALLS * SUBSCRIPTIONS} requests)`, raw),
      '',
      `CPU ms per delivery (all processes; ${os.cpus().length} CPUs give ${(os.cpus().length * 1000).toFixed(0)} CPU ms per second):`,
      cpuLine('idle', idleCpu, idle.rate),
      ...(PEER
        ? [cpuLine('idle, peer', cpuPerDelivery(sides[1]!.idleCpu, PAIRS * IDLE_CALLS * SUBSCRIPTIONS), medianOf(sides[1]!.idle).rate)]
        : []),
      cpuLine('burst', burstCpu, burst.rate),
      ...(PEER
        ? [cpuLine('burst, peer', cpuPerDelivery(sides[1]!.burstCpu, PAIRS * CALLS * SUBSCRIPTIONS), medianOf(sides[1]!.burst).rate)]
        : []),
      cpuLine(
        'raw, concurrent',
        { generator: rawConcurrent.cpuMs / (CALLS * SUBSCRIPTIONS), worker: NaN, receivers: rawReceiversMs, database: NaN },
        raw.rate,
      ),
    ];
    process.stdout.write(`${out.join('\n')}\n`);

    // The peer, pair by pair, and the ratios against its goals: each pair's ratio, then their median.
    let peerVerdict = '';
    if (PEER) {
      const peer = sides[1]!;
      const fmt = (v: number) => v.toFixed(1).padStart(5);
      const ratios = ours.idle.map((_, i) => ({
        p50: ours.idle[i]!.p50 / peer.idle[i]!.p50,
        p99: ours.idle[i]!.p99 / peer.idle[i]!.p99,
        burst: ours.burst[i]!.rate / peer.burst[i]!.rate,
      }));
      process.stdout.write(
        `\ngraphile-worker 0.17.3 (bench/peer/graphile-worker.ts: LISTEN/NOTIFY, 2 s poll, concurrency ${CONCURRENCY}), same receivers and PostgreSQL, ` +
          `${IDLE_CALLS} idle calls and ${CALLS} burst calls a side, alternated (Switchboard ÷ peer):\n`,
      );
      for (const [i, r] of ratios.entries()) {
        const [o, q] = [ours, peer];
        process.stdout.write(
          `  pair ${i + 1} (${i % 2 === 0 ? 'Switchboard first' : 'peer first'}): idle p50 ${fmt(o.idle[i]!.p50)} / ${fmt(q.idle[i]!.p50)} ms = ${r.p50.toFixed(2)}×` +
            `  p99 ${fmt(o.idle[i]!.p99)} / ${fmt(q.idle[i]!.p99)} ms = ${r.p99.toFixed(2)}×` +
            `  burst ${o.burst[i]!.rate.toFixed(0).padStart(5)} / ${q.burst[i]!.rate.toFixed(0).padStart(5)} /s = ${r.burst.toFixed(2)}×\n`,
        );
      }
      const peerIdle = medianOf(peer.idle);
      const peerBurst = medianOf(peer.burst);
      const m = { p50: median(ratios.map((r) => r.p50)), p99: median(ratios.map((r) => r.p99)), burst: median(ratios.map((r) => r.burst)) };
      process.stdout.write(
        `  median          : idle p50 ${fmt(idle.p50)} / ${fmt(peerIdle.p50)} ms = ${m.p50.toFixed(2)}×  p99 ${fmt(idle.p99)} / ${fmt(peerIdle.p99)} ms = ${m.p99.toFixed(2)}×` +
          `  burst ${burst.rate.toFixed(0).padStart(5)} / ${peerBurst.rate.toFixed(0).padStart(5)} /s = ${m.burst.toFixed(2)}×\n`,
      );
      const met = (pass: boolean) => (pass ? 'ok' : 'BELOW GOAL');
      peerVerdict =
        ` | peer: idle p50 ${m.p50.toFixed(2)}× (goal ≤1, ${met(m.p50 <= 1)}) p99 ${m.p99.toFixed(2)}× (goal ≤1.1, ${met(m.p99 <= 1.1)})` +
        ` burst ${m.burst.toFixed(2)}× (goal ≥3, ${met(m.burst >= 3)})`;
    }

    // 4. Backlog: drain rates and the claim with few rows, then with B rows.
    let backlog: { ratio: number; claimMs: number } | undefined;
    if (BACKLOG > 0) {
      const due = Math.round(BACKLOG / 10);
      const drained = Math.min(DRAIN, due);
      const drain = async (label: string) => {
        const {
          rows: [count],
        } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_deliveries');
        const claim = await measureClaim(pool);
        const before = receipts;
        worker = await startWorker();
        // Timed from the first receipt: the worker's start-up is not the drain.
        await receiptsReach(before + 1);
        const t0 = performance.now();
        await receiptsReach(before + drained);
        const elapsed = performance.now() - t0;
        await worker.stop();
        const rate = drained / (elapsed / 1000);
        process.stdout.write(
          `  ${label.padEnd(20)} ${String(count!.n).padStart(9)} rows: ${drained} delivered in ${(elapsed / 1000).toFixed(1)} s = ${rate.toFixed(0)} /s;` +
            ` claim round trip ${claim.roundTripMs.toFixed(2)} ms (execution ${claim.executionMs.map((ms) => ms.toFixed(2)).join(' + ')} ms${claim.seqScan ? ', SEQ SCAN' : ''})\n`,
        );
        return { rate, claim };
      };
      process.stdout.write(
        `\nbacklog (the first ${drained} due deliveries taken by a freshly started worker, from its first receipt to the last):\n`,
      );
      await loadRows(pool, org.id, subscriptionIds, drained, 0);
      const empty = await drain(`${drained} due`);
      await loadRows(pool, org.id, subscriptionIds, due, BACKLOG - due);
      const full = await drain(`--backlog ${BACKLOG}`);
      backlog = { ratio: full.rate / empty.rate, claimMs: full.claim.roundTripMs };
    }

    const ok = (pass: boolean) => (pass ? 'ok' : 'BELOW GOAL');
    const burstRatio = burst.rate / raw.rate;
    process.stdout.write(
      `ratio burst/raw ${burstRatio.toFixed(2)}× (goal ≥0.5, ${ok(burstRatio >= 0.5)})` +
        ` | idle p50 ${idle.p50.toFixed(1)} ms p99 ${idle.p99.toFixed(1)} ms (goal ≤3/≤15, ${ok(idle.p50 <= 3 && idle.p99 <= 15)})` +
        (backlog
          ? ` | backlog/empty drain ${backlog.ratio.toFixed(2)}× (goal ≥0.8, ${ok(backlog.ratio >= 0.8)}) | claim with backlog ${backlog.claimMs.toFixed(2)} ms (goal ≤5, ${ok(backlog.claimMs <= 5)})`
          : '') +
        peerVerdict +
        '\n',
    );
  } finally {
    for (const child of children.reverse()) await child.stop();
    targets?.send({ type: 'close' });
    await pool.end();
    await database.stop();
    await rm(tmp, { recursive: true, force: true });
  }
}

await main();
