// npm run bench:neighbour [-- --k 8,64,512 --modes hang,slow,refuse,error --calls N --burst M --warm-up S --wait S]
//
// Whether one organization's broken webhook endpoints delay another
// organization's deliveries. Each side runs in its own process, as a user
// would run it:
//   - this process: setup (through the service functions), then the load
//     generator: completed calls posted over HTTP to `POST /calls` with an
//     x-user-token, as the voice service sends them;
//   - `switchboard serve` (the API and the delivery worker in one process),
//     default settings apart from allowing loopback targets
//     (WEBHOOK_ALLOW_PRIVATE_TARGETS=true, any port) and LOG_LEVEL=warn,
//     trusting the throwaway test CA (NODE_EXTRA_CA_CERTS);
//   - organization B's receiver (bench/neighbour-targets.js healthy): one
//     HTTPS target answering 204 at once, reporting each receipt's time;
//   - organization A's receivers (bench/neighbour-targets.js <mode>): K
//     targets, one port each, broken in one of four ways: hang (read the
//     request, never answer: every attempt runs into WEBHOOK_TIMEOUT_MS, 10 s),
//     slow (200 after 2 s), refuse (nothing listens) or error (500 at once).
// Latency is from the 201 of B's POST /calls (the call and its deliveries
// committed) to B's receiver reading the delivery, on the clock the processes
// share (performance.timeOrigin + now()).
//
// Every run gets a fresh database (a copy of one migrated at the start), a
// fresh server and fresh receivers for A; B's receiver runs throughout.
// Before anything is measured, B completes 220 calls with no A load (a burst
// of 200 and 20 one at a time: connections, the JIT) and waits for their
// deliveries. Then:
//   1. B alone (no organization A at all): B completes one call every 10 ms,
//      --calls N (300); p50/p99 latency. Then B's burst: --burst M (2,000)
//      calls completed by 8 concurrent clients, deliveries/s from the first
//      POST to the last receipt.
//   2. For each mode of --modes and K of --k: organization A with K
//      subscriptions completes one call every 100 ms (asking for K × 10
//      deliveries/s; at most 16 unanswered, further ticks are skipped and
//      counted) from --warm-up S (5) seconds before B is measured until B's
//      runs are over; B's latency run and burst as in 1, beside A.
//   Lost and late: a latency sample that has not arrived --wait S (30) seconds
//   after its run's last answer is lost, and a lost sample fails the goal. They
//   are awaited while the burst runs (it starts once they have all arrived, or
//   2 s after that last answer), so that waiting costs no extra time. Beside A,
//   the burst stops posting, and its deliveries are no longer awaited, 1.25 ×
//   the time its goal allows after its first POST (1.25 × M / (0.8 × B's rate
//   alone)): past the time the goal allows, it is missed whatever comes after.
//   3. A's side, read from the database (owner connection) once the server is
//      stopped: every call A was answered 201 for has one delivery per A
//      subscription, no retry came earlier than 0.9 × its WEBHOOK_RETRY_SCHEDULE
//      delay (the default 10s,1m,5m,…; after a lost attempt, the lease; after a
//      429/503, the 1 s Retry-After floor, since the header is not stored:
//      these receivers never send one), and A's deliveries attempted, pending,
//      succeeded and failed.
// Goals, per mode and K: B's p99 beside A ≤ max(2 × B's p99 alone, 50 ms)
// with no sample lost; B's burst beside A ≥ 0.8 × B's burst alone with every
// delivery arrived. A final table gives both, and a line per goal. The goals
// are set from B alone, measured once: on a machine busy with other work it is
// slow, and the goals loose; a last line says so when the load average passed
// the number of CPUs.
//
// The server is stopped with SIGKILL at the end of each run (a graceful stop
// would wait for A's attempts; nothing acknowledged is lost either way). The
// default run took 10 minutes on 2 CPUs, and 18 with the machine's load
// average at 12–20 from other work; most of it goes to the runs where B's
// samples are lost (each waits --wait).
//
// DATABASE_URL selects the PostgreSQL server (its CPU figure then counts every
// backend of that server, other users' too); unset, an embedded one runs in a
// temporary directory.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool as HttpPool } from 'undici';
import { issueSession } from '../src/auth/sessions.service.ts';
import { loadConfig } from '../src/config/config.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool, type Pool } from '../src/db/pool.ts';
import { withTransaction } from '../src/db/transaction.ts';
import { createClient } from '../src/oauth/clients.service.ts';
import { createGrant } from '../src/oauth/tokens.service.ts';
import { insertOrganization } from '../src/organizations/organizations.queries.ts';
import { createUser } from '../src/organizations/organizations.service.ts';
import { leaseMsFor, RETRY_AFTER_FLOOR_MS } from '../src/webhooks/worker/retry-policy.ts';
import { createSecretBox, type SecretBox } from '../src/crypto/secret-box.ts';
import { subscribe } from '../src/webhooks/subscriptions.service.ts';
import { generateTestTls, type TestTls } from '../test/helpers/tls-certificates.ts';
import { benchDatabase, type BenchDatabase } from './bench-database.ts';
import { cpuSeconds, postmasterOf, serverCpuSeconds } from './process-cpu.ts';
import { freePort } from '../src/free-port.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MODES = ['hang', 'slow', 'refuse', 'error'] as const;
type Mode = (typeof MODES)[number];

const { values: args } = parseArgs({
  options: {
    k: { type: 'string', default: '8,64,512' },
    modes: { type: 'string', default: MODES.join(',') },
    calls: { type: 'string', default: '300' },
    burst: { type: 'string', default: '2000' },
    'warm-up': { type: 'string', default: '5' },
    wait: { type: 'string', default: '30' },
  },
});
function positive(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a whole number ≥ 1, got "${text}"`);
  return value;
}
const KS = args.k.split(',').map((k) => positive('k', k.trim()));
const MODES_RUN = args.modes.split(',').map((m) => m.trim()) as Mode[];
for (const mode of MODES_RUN) if (!MODES.includes(mode)) throw new Error(`--modes: "${mode}" is not one of ${MODES.join(', ')}`);
const CALLS = positive('calls', args.calls);
const BURST = positive('burst', args.burst);
const WARM_UP_MS = Number(args['warm-up']) * 1000;
const WAIT_MS = Number(args.wait) * 1000;
if (!(WARM_UP_MS >= 0) || !(WAIT_MS >= 0)) throw new Error('--warm-up and --wait are seconds ≥ 0');

const B_INTERVAL_MS = 10;
const A_INTERVAL_MS = 100;
/** A's unanswered calls at most; beyond it A's ticks are skipped (and counted). */
const A_MAX_IN_FLIGHT = 16;
/** After B's latency run, the burst starts once its samples have arrived, or this long after its last answer. */
const SEPARATION_MS = 2000;
const BURST_CLIENTS = 8;
const B_WARM_UP_BURST = 200;
const B_WARM_UP_ONE_BY_ONE = 20;
const P99_FLOOR_MS = 50;
const BURST_RATIO_GOAL = 0.8;
/** Beside A, B's burst ends this many times the time its goal allows after its first POST (see main). */
const BURST_LIMIT_FACTOR = 1.25;
/** Setup's connections: K subscriptions are made this many at a time. */
const SETUP_CONNECTIONS = 8;
const CALL_BODY = JSON.stringify({ summary: 'Customer booked a visit for next Tuesday', duration_seconds: 184 });

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Nearest rank; a lost sample is Infinity, so it counts as slower than any that arrived. */
function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const ms = (value: number) => (Number.isNaN(value) ? '—' : value === Infinity ? 'lost' : `${value.toFixed(1)} ms`);

// Every child process, killed when this process ends however it ends.
const children = new Set<ChildProcess>();
function track<T extends ChildProcess>(child: T): T {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}
let database: BenchDatabase | undefined;
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
  // An embedded PostgreSQL still running here means stop() never ran (an error in cleanup, or a signal during it).
  if (database?.pgdata) {
    try {
      process.kill(Number(readFileSync(path.join(database.pgdata, 'postmaster.pid'), 'utf8').split('\n')[0]), 'SIGQUIT');
    } catch {
      // stopped already
    }
  }
});

interface Targets {
  child: ChildProcess;
  urls: string[];
  requests(): Promise<number>;
  close(): Promise<void>;
}

/** bench/neighbour-targets.js in its own process, in `role`. */
async function startTargets(role: 'healthy' | Mode, count: number, tls: TestTls): Promise<Targets> {
  const child = track(
    fork(path.join(ROOT, 'bench/neighbour-targets.js'), [role, tls.certPath, tls.keyPath, String(count)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: [],
    }),
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const urls = await new Promise<string[]>((resolve, reject) => {
    const onMessage = (message: { type: string; urls?: string[] }) => {
      if (message.type !== 'ready') return;
      child.off('message', onMessage);
      resolve(message.urls!);
    };
    child.on('message', onMessage);
    void exited.then(() => reject(new Error(`bench/neighbour-targets.js ${role} exited with ${child.exitCode}`)));
  });
  return {
    child,
    urls,
    requests: () =>
      new Promise((resolve) => {
        const onMessage = (message: { type: string; requests?: number }) => {
          if (message.type !== 'stats') return;
          child.off('message', onMessage);
          resolve(message.requests!);
        };
        child.on('message', onMessage);
        child.send({ type: 'stats' });
      }),
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.send({ type: 'close' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

interface Server {
  child: ChildProcess;
  url: string;
  kill(): Promise<void>;
}

/** `switchboard serve` from the build, its output in `logFile`; resolves once /readyz answers 200. */
async function startServer(env: NodeJS.ProcessEnv, logFile: string): Promise<Server> {
  const port = await freePort();
  const fd = openSync(logFile, 'w');
  const child = track(
    spawn(process.execPath, [path.join(ROOT, 'bin/switchboard.js'), 'serve'], {
      cwd: ROOT,
      env: { ...env, PORT: String(port) },
      stdio: ['ignore', fd, fd],
    }),
  );
  closeSync(fd);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const server = {
    child,
    url: `http://127.0.0.1:${port}`,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  const started = performance.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`switchboard serve exited with ${child.exitCode}:\n${readFileSync(logFile, 'utf8')}`);
    if (
      await fetch(`${server.url}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      )
    )
      return server;
    if (performance.now() - started > 120_000) {
      await server.kill();
      throw new Error(`switchboard serve not ready within 120 s:\n${readFileSync(logFile, 'utf8')}`);
    }
    await sleep(20);
  }
}

interface Posted {
  /** The call's id when it was answered 201. */
  id?: string;
  /** When the answer's head arrived. */
  at: number;
  status: number;
}

/** One completed call, as the voice service posts it. A network error is status 0. */
async function postCall(http: HttpPool, token: string): Promise<Posted> {
  try {
    const { statusCode, body } = await http.request({
      path: '/calls',
      method: 'POST',
      headers: { 'x-user-token': token, 'content-type': 'application/json' },
      body: CALL_BODY,
    });
    const at = now();
    const text = await body.text();
    return statusCode === 201 ? { id: (JSON.parse(text) as { id: string }).id, at, status: statusCode } : { at, status: statusCode };
  } catch {
    return { at: now(), status: 0 };
  }
}

// B's receipts: call id → the first receipt's time (a retry of a delivery B's target answered is not counted again).
const receipts = new Map<string, number>();
const receiptListeners = new Set<() => void>();

/** True once every call of `ids` has been received, false if `timeoutMs` passes first. */
function arrivals(ids: string[], timeoutMs: number): Promise<boolean> {
  const missing = new Set(ids.filter((id) => !receipts.has(id)));
  if (missing.size === 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const check = () => {
      for (const id of missing) if (receipts.has(id)) missing.delete(id);
      if (missing.size > 0) return;
      done(true);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    const done = (all: boolean) => {
      clearTimeout(timer);
      receiptListeners.delete(check);
      resolve(all);
    };
    receiptListeners.add(check);
  });
}

interface LatencyRun {
  /** One per call: receipt − 201, Infinity when lost or not answered 201. */
  latencies: number[];
  arrived: number;
  failedPosts: number;
  p50: number;
  p99: number;
}

/**
 * B completes one call every B_INTERVAL_MS (whatever the previous answer's
 * time), `calls` in all. Resolves once they are answered; `received` settles
 * when every sample has arrived, or WAIT_MS after that with the rest lost.
 */
async function postLatencyRun(http: HttpPool, token: string, calls: number): Promise<{ received: Promise<LatencyRun> }> {
  const posts: Promise<Posted>[] = [];
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) {
    const delay = t0 + i * B_INTERVAL_MS - performance.now();
    if (delay > 0) await sleep(delay);
    posts.push(postCall(http, token));
  }
  const posted = await Promise.all(posts);
  const ids = posted.flatMap((p) => (p.id ? [p.id] : []));
  const received = arrivals(ids, WAIT_MS).then(() => {
    const latencies = posted.map((p) => (p.id && receipts.has(p.id) ? receipts.get(p.id)! - p.at : Infinity)).sort((a, b) => a - b);
    return {
      latencies,
      arrived: latencies.filter((l) => l !== Infinity).length,
      failedPosts: calls - ids.length,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
    };
  });
  return { received };
}

/** `count` calls, each delivered before the next is posted; true when all arrived. */
async function oneByOne(http: HttpPool, token: string, count: number): Promise<boolean> {
  for (let i = 0; i < count; i++) {
    const posted = await postCall(http, token);
    if (!posted.id || !(await arrivals([posted.id], 60_000))) return false;
  }
  return true;
}

interface BurstRun {
  /** Deliveries received per second, from the first POST to the last receipt (or to the end of the wait). */
  rate: number;
  posted: number;
  arrived: number;
  failedPosts: number;
  /** Every call posted, answered 201 and delivered in time. */
  complete: boolean;
  /** Calls per second while posting. */
  ingestRate: number;
  p50: number;
  p99: number;
}

/**
 * `count` calls completed by BURST_CLIENTS clients, each posting its next call
 * when the previous is answered. With `limitMs`, posting stops and the wait for
 * deliveries ends that long after the first POST; without, deliveries are
 * awaited for `waitMs` after the last answer.
 */
async function burstRun(
  http: HttpPool,
  token: string,
  count: number,
  options: { limitMs?: number; waitMs?: number } = {},
): Promise<BurstRun> {
  const started = now();
  const deadline = started + (options.limitMs ?? Infinity);
  const posted: Posted[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: BURST_CLIENTS }, async () => {
      while (next < count && now() < deadline) {
        next++;
        posted.push(await postCall(http, token));
      }
    }),
  );
  const ingestMs = now() - started;
  const ids = posted.flatMap((p) => (p.id ? [p.id] : []));
  const all = await arrivals(ids, options.limitMs === undefined ? (options.waitMs ?? WAIT_MS) : Math.max(0, deadline - now()));
  const received = ids.flatMap((id) => (receipts.has(id) ? [receipts.get(id)!] : []));
  const end = all && received.length > 0 ? Math.max(...received) : now();
  const latencies = posted.map((p) => (p.id && receipts.has(p.id) ? receipts.get(p.id)! - p.at : Infinity)).sort((a, b) => a - b);
  return {
    rate: received.length / ((end - started) / 1000),
    posted: posted.length,
    arrived: received.length,
    failedPosts: posted.length - ids.length,
    complete: all && ids.length === count,
    ingestRate: posted.length / (ingestMs / 1000),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
}

interface ALoad {
  /** Ticks at which a call was posted, and those skipped because A_MAX_IN_FLIGHT were still unanswered. */
  ticks: number;
  skipped: number;
  created: number;
  failed: number;
  postMs: number[];
  stop(): Promise<void>;
}

/**
 * A completes one call every A_INTERVAL_MS until stopped, whatever the
 * previous answer's time, but with at most A_MAX_IN_FLIGHT unanswered: a
 * server that cannot take A's calls that fast would otherwise gather an
 * unbounded queue of them here (and stopping would wait for all of it).
 */
function startALoad(http: HttpPool, token: string): ALoad {
  let stopping = false;
  const inFlight = new Set<Promise<void>>();
  const load: ALoad = {
    ticks: 0,
    skipped: 0,
    created: 0,
    failed: 0,
    postMs: [],
    async stop() {
      stopping = true;
      await loop;
      await Promise.all([...inFlight]);
    },
  };
  const loop = (async () => {
    const t0 = performance.now();
    for (let i = 0; ; i++) {
      const delay = t0 + i * A_INTERVAL_MS - performance.now();
      if (delay > 0) await sleep(delay);
      if (stopping) return;
      load.ticks++;
      if (inFlight.size >= A_MAX_IN_FLIGHT) {
        load.skipped++;
        continue;
      }
      const sent = now();
      const post: Promise<void> = postCall(http, token).then((p) => {
        if (p.id) {
          load.created++;
          load.postMs.push(p.at - sent);
        } else {
          load.failed++;
        }
      });
      inFlight.add(post);
      void post.finally(() => inFlight.delete(post));
    }
  })();
  return load;
}

interface Org {
  id: string;
  /** Its owner's x-user-token. */
  token: string;
}

/** An organization, its owner (and session), the platform's grant, and one subscription per URL. */
async function setUpOrg(
  pool: Pool,
  secretBox: SecretBox,
  platform: { client: { id: string }; client_id: string },
  name: string,
  urls: string[],
): Promise<Org> {
  const org = await insertOrganization(pool, `Bench ${name}`);
  const user = await createUser(pool, { email: `${name}@example.com`, password: 'bench-password', organizationId: org.id, role: 'owner' });
  const session = await issueSession(pool, user, org.id);
  const grant = await withTransaction(pool, (tx) =>
    createGrant(tx, { clientUuid: platform.client.id, userId: user.id, organizationId: org.id, scopes: ['calls:read'] }),
  );
  const principal = {
    kind: 'oauth' as const,
    userId: user.id,
    organizationId: org.id,
    scopes: ['calls:read'],
    clientId: platform.client_id,
    grantId: grant.id,
  };
  let next = 0;
  await Promise.all(
    Array.from({ length: SETUP_CONNECTIONS }, async () => {
      while (next < urls.length) {
        const url = urls[next++]!;
        const deps = { pool, secretBox, urlCheck: { allowPrivate: true, allowedPorts: '*' as const }, maxSubscriptions: urls.length };
        await subscribe(deps, principal, {
          hookUrl: url,
          secret: 'bench-secret',
        });
      }
    }),
  );
  return { id: org.id, token: session.token };
}

interface ASide {
  ok: boolean;
  line: string;
}

/** A's deliveries and attempts, read with the owner's connection once the server is stopped. */
async function checkA(pool: Pool, orgId: string, k: number, created: number, scheduleMs: number[], leaseMs: number): Promise<ASide> {
  const {
    rows: [calls],
  } = await pool.query<{ calls: number; short: number }>(
    `SELECT count(*)::int AS calls, count(*) FILTER (WHERE n <> $2)::int AS short
       FROM (SELECT c.id, count(d.id) AS n
               FROM calls c LEFT JOIN webhook_deliveries d ON d.organization_id = c.organization_id AND d.call_id = c.id
              WHERE c.organization_id = $1 AND c.status = 'completed'
              GROUP BY c.id) per_call`,
    [orgId, k],
  );
  const {
    rows: [deliveries],
  } = await pool.query<{ total: number; attempted: number; attempts: number; pending: number; succeeded: number; failed: number }>(
    `SELECT count(*)::int AS total, count(*) FILTER (WHERE attempts > 0)::int AS attempted, coalesce(sum(attempts), 0)::int AS attempts,
            count(*) FILTER (WHERE status = 'pending')::int AS pending, count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded,
            count(*) FILTER (WHERE status = 'failed')::int AS failed
       FROM webhook_deliveries WHERE organization_id = $1`,
    [orgId],
  );
  // Each logged attempt after a delivery's first against the one before it. The retry after
  // the m-th attempt of the current schedule waits schedule[m] (1-based) ± 10 %, counted from
  // that attempt's end, so the gap between their starts is at least 0.9 × schedule[m].
  const {
    rows: [schedule],
  } = await pool.query<{ retries: number; early: number; beyond: number; gaps: number; closest: number | null }>(
    `WITH logged AS (
       SELECT t.attempt, t.attempted_at, d.schedule_start,
              lag(t.attempt) OVER w AS prev_attempt, lag(t.attempted_at) OVER w AS prev_at,
              lag(t.status_code) OVER w AS prev_status, lag(t.error) OVER w AS prev_error
         FROM webhook_attempts t JOIN webhook_deliveries d ON d.organization_id = t.organization_id AND d.id = t.delivery_id
        WHERE t.organization_id = $1
       WINDOW w AS (PARTITION BY t.delivery_id ORDER BY t.attempt)
     ), retries AS (
       SELECT extract(epoch FROM attempted_at - prev_at) * 1000 AS gap_ms, attempt <> prev_attempt + 1 AS gap_in_log,
              CASE WHEN prev_error = 'lease_expired' THEN $3::int
                   WHEN prev_status IN (429, 503) THEN $4::int
                   ELSE ($2::int[])[prev_attempt - schedule_start] END AS delay_ms
         FROM logged WHERE prev_at IS NOT NULL
     )
     SELECT count(*)::int AS retries,
            count(*) FILTER (WHERE gap_ms < 0.9 * delay_ms)::int AS early,
            count(*) FILTER (WHERE delay_ms IS NULL)::int AS beyond,
            count(*) FILTER (WHERE gap_in_log)::int AS gaps,
            min(gap_ms / delay_ms)::float8 AS closest
       FROM retries`,
    [orgId, scheduleMs, leaseMs, RETRY_AFTER_FLOOR_MS],
  );
  const problems: string[] = [];
  if (calls!.calls !== created) problems.push(`${created} calls answered 201 but ${calls!.calls} completed calls in the database`);
  if (calls!.short > 0) problems.push(`LOST: ${calls!.short} calls without exactly ${k} deliveries`);
  if (schedule!.early > 0)
    problems.push(
      `${schedule!.early} of ${schedule!.retries} retries earlier than 0.9 × their delay (closest ${schedule!.closest?.toFixed(2)} × the delay)`,
    );
  if (schedule!.beyond > 0) problems.push(`${schedule!.beyond} attempts after the schedule's last`);
  if (schedule!.gaps > 0) problems.push(`${schedule!.gaps} attempts missing from the attempt log before a later one`);
  const d = deliveries!;
  const counts =
    `${created} calls, ${d.total} deliveries: ${d.attempted} attempted (${d.attempts} attempts, ${schedule!.retries} retries logged` +
    `${schedule!.closest === null ? '' : `, closest ${schedule!.closest.toFixed(2)} × its delay`}), ${d.pending} pending, ${d.succeeded} succeeded, ${d.failed} failed`;
  return { ok: problems.length === 0, line: `A: ${problems.length === 0 ? 'none lost, schedule kept' : problems.join('; ')} — ${counts}` };
}

interface Result {
  mode: Mode | 'alone';
  k: number;
  latency: LatencyRun;
  burst: BurstRun;
  a?: { side: ASide; created: number; failed: number; ticks: number; skipped: number; postP99: number; targetRequests: number };
  cpu: string;
  /** The machine's 1-minute load average at the end of B's runs. */
  load: number;
  /** The run's wall time, setup and teardown included. */
  seconds: number;
}

async function main() {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'switchboard-bench-neighbour-'));
  let bTarget: Targets | undefined;
  let cleaned: Promise<void> | undefined;
  const cleanup = () =>
    (cleaned ??= (async () => {
      for (const child of children) child.kill('SIGKILL');
      await database?.stop();
      await rm(tmp, { recursive: true, force: true });
    })());
  // `on`, not `once`: a second signal (tsx relays one to this process when it
  // does not hear back at once) must not end the process before the cleanup has.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (!cleaned) process.stderr.write(`bench:neighbour: ${signal}, stopping the processes it started\n`);
      void cleanup().finally(() => process.exit(130));
    });
  }
  try {
    database = await benchDatabase();
    const tls = await generateTestTls(tmp);
    const template = createPool(database.url, 2);
    try {
      await migrate(template);
    } finally {
      await template.end();
    }
    bTarget = await startTargets('healthy', 1, tls);
    bTarget.child.on('message', (message: { type: string; items?: [string, string, number, number][] }) => {
      if (message.type !== 'received') return;
      for (const [callId, , , at] of message.items!) if (!receipts.has(callId)) receipts.set(callId, at);
      for (const listener of receiptListeners) listener();
    });

    const baseEnv: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_ALLOWED_PORTS: '*',
      LOG_LEVEL: 'warn',
      NODE_EXTRA_CA_CERTS: tls.caCertPath,
    };
    // The server's own reading of these settings: the schedule and lease A's retries are checked against.
    const config = loadConfig(baseEnv);
    const leaseMs = leaseMsFor(config.webhookTimeoutMs);

    const run = async (a?: { mode: Mode; k: number }, burstLimitMs?: number): Promise<Result> => {
      const label = a ? `${a.mode}-${a.k}` : 'alone';
      const runStarted = performance.now();
      const db = await database!.another(database!.name);
      const pool = createPool(db.url, SETUP_CONNECTIONS);
      let aTargets: Targets | undefined;
      let server: Server | undefined;
      let aLoad: ALoad | undefined;
      const http: HttpPool[] = [];
      try {
        const secretKey = randomBytes(32);
        const secretBox = createSecretBox(secretKey);
        const platform = await createClient(pool, { name: 'Bench Platform', redirectUris: ['https://bench.example/cb'] });
        const b = await setUpOrg(pool, secretBox, platform, 'b', bTarget!.urls);
        aTargets = a ? await startTargets(a.mode, a.k, tls) : undefined;
        const orgA = a ? await setUpOrg(pool, secretBox, platform, 'a', aTargets!.urls) : undefined;
        server = await startServer(
          { ...baseEnv, DATABASE_URL: db.url, SECRET_KEY: secretKey.toString('base64') },
          path.join(tmp, `serve-${label}.log`),
        );
        const bHttp = new HttpPool(server.url, { connections: BURST_CLIENTS });
        const aHttp = new HttpPool(server.url, { connections: 16 });
        http.push(bHttp, aHttp);

        // B's warm-up, with no A load (there may be no A at all).
        const warm = await burstRun(bHttp, b.token, B_WARM_UP_BURST, { waitMs: 60_000 });
        const warmOne = await oneByOne(bHttp, b.token, B_WARM_UP_ONE_BY_ONE);
        if (!warm.complete || !warmOne) throw new Error(`${label}: B's warm-up deliveries did not all arrive within 60 s with no A load`);

        if (orgA) {
          aLoad = startALoad(aHttp, orgA.token);
          await sleep(WARM_UP_MS);
        }
        const {
          rows: [backend],
        } = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        const postmaster = postmasterOf(backend!.pid);
        const cpu = () => {
          const self = process.cpuUsage();
          return [
            (self.user + self.system) / 1e6,
            cpuSeconds(server!.child.pid!),
            postmaster ? serverCpuSeconds(postmaster) : NaN,
            cpuSeconds(bTarget!.child.pid!) + (aTargets ? cpuSeconds(aTargets.child.pid!) : 0),
          ];
        };
        const cpuBefore = cpu();
        const started = performance.now();
        // The latency run's samples are awaited while the burst runs: B's burst
        // starts once they have arrived, or SEPARATION_MS after the run's last
        // answer, so samples that take long cost no extra time.
        const { received } = await postLatencyRun(bHttp, b.token, CALLS);
        await Promise.race([received, sleep(SEPARATION_MS)]);
        const burst = await burstRun(bHttp, b.token, BURST, burstLimitMs === undefined ? {} : { limitMs: burstLimitMs });
        const latency = await received;
        const elapsed = (performance.now() - started) / 1000;
        const [generator, serve, postgres, receivers] = cpu().map((value, i) => value - cpuBefore[i]!) as [number, number, number, number];
        const load = os.loadavg()[0]!;
        const busy =
          ([generator, serve, postgres, receivers].filter((v) => !Number.isNaN(v)).reduce((x, y) => x + y, 0) /
            (elapsed * os.cpus().length)) *
          100;
        const cpuLine =
          `CPU s over B's runs (${elapsed.toFixed(1)} s): serve ${serve.toFixed(1)}, PostgreSQL ${postgres.toFixed(1)}, receivers ${receivers.toFixed(1)},` +
          ` load generator ${generator.toFixed(1)} = ${busy.toFixed(0)} % of ${os.cpus().length} CPUs; machine load average ${load.toFixed(1)}`;

        await aLoad?.stop();
        const targetRequests = aTargets ? await aTargets.requests() : 0;
        await server.kill();
        let aResult: Result['a'];
        if (orgA && aLoad) {
          const side = await checkA(pool, orgA.id, a!.k, aLoad.created, config.webhookRetryScheduleMs, leaseMs);
          const postMs = [...aLoad.postMs].sort((x, y) => x - y);
          aResult = {
            side,
            created: aLoad.created,
            failed: aLoad.failed,
            ticks: aLoad.ticks,
            skipped: aLoad.skipped,
            postP99: percentile(postMs, 99),
            targetRequests,
          };
        }
        return {
          mode: a?.mode ?? 'alone',
          k: a?.k ?? 0,
          latency,
          burst,
          a: aResult,
          cpu: cpuLine,
          load,
          seconds: (performance.now() - runStarted) / 1000,
        };
      } finally {
        await aLoad?.stop();
        await server?.kill();
        await Promise.all(http.map((h) => h.destroy()));
        await aTargets?.close();
        await pool.end();
        await db.drop();
      }
    };

    const combinations = MODES_RUN.flatMap((mode) => KS.map((k) => ({ mode, k })));
    process.stdout.write(
      `bench:neighbour — B: ${CALLS} calls one every ${B_INTERVAL_MS} ms, then a burst of ${BURST} by ${BURST_CLIENTS} clients;` +
        ` A: one call every ${A_INTERVAL_MS} ms to K broken targets (${combinations.length} runs: modes ${MODES_RUN.join(',')}, K ${KS.join(',')}), warm-up ${WARM_UP_MS / 1000} s,` +
        ` lost after ${WAIT_MS / 1000} s; serve, receivers and load generator in separate processes (Node ${process.version}, ${os.cpus().length} CPUs,` +
        ` ${process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded PostgreSQL'})\n\n`,
    );
    const describe = (r: Result) => {
      const l = r.latency;
      const b = r.burst;
      const lines = [
        `${r.mode === 'alone' ? 'B alone' : `${r.mode} K=${r.k}`} (${r.seconds.toFixed(0)} s with setup):`,
        `  B latency: p50 ${ms(l.p50)}  p99 ${ms(l.p99)}  arrived ${l.arrived}/${CALLS}${l.failedPosts ? `  (${l.failedPosts} POSTs not answered 201)` : ''}`,
        `  B burst:   ${b.rate.toFixed(0)} deliveries/s  posted ${b.posted}/${BURST}, arrived ${b.arrived}  (posting ${b.ingestRate.toFixed(0)} calls/s; latency p50 ${ms(b.p50)} p99 ${ms(b.p99)})` +
          `${b.failedPosts ? `  (${b.failedPosts} POSTs not answered 201)` : ''}`,
        `  ${r.cpu}`,
      ];
      if (r.a) {
        lines.push(`  ${r.a.side.line}`);
        lines.push(
          `  A's load: ${r.a.created} calls answered 201 (POST p99 ${ms(r.a.postP99)})${r.a.failed ? `, ${r.a.failed} not` : ''}` +
            `${r.a.skipped ? `, ${r.a.skipped} of ${r.a.ticks} ticks skipped (${A_MAX_IN_FLIGHT} calls unanswered)` : ''}; A's targets read ${r.a.targetRequests} requests`,
        );
      }
      return `${lines.join('\n')}\n`;
    };

    const alone = await run();
    process.stdout.write(describe(alone));
    // Beside A, B's burst meets its goal only if all of it is delivered within
    // BURST / (0.8 × the rate alone) of its first POST: it is given a quarter more.
    const burstLimitMs = (BURST_LIMIT_FACTOR * BURST * 1000) / (BURST_RATIO_GOAL * alone.burst.rate);
    process.stdout.write(
      `(beside A, B's burst posts and is awaited for at most ${(burstLimitMs / 1000).toFixed(1)} s: ${BURST_LIMIT_FACTOR} × the time its goal allows)\n`,
    );
    const results: Result[] = [];
    for (const combination of combinations) {
      const result = await run(combination, burstLimitMs);
      results.push(result);
      process.stdout.write(describe(result));
    }

    const p99Goal = Math.max(2 * alone.latency.p99, P99_FLOOR_MS);
    const burstGoal = BURST_RATIO_GOAL * alone.burst.rate;
    // Without every delivery of B alone there is no baseline to judge against.
    const baseline = alone.latency.arrived === CALLS && alone.latency.failedPosts === 0 && alone.burst.complete;
    const p99Met = (r: Result) => baseline && r.latency.arrived === CALLS && r.latency.p99 <= p99Goal;
    const burstMet = (r: Result) => baseline && r.burst.complete && r.burst.rate >= burstGoal;
    const verdict = (ok: boolean) => (ok ? 'met' : 'NOT MET');
    const widths = [7, 5, 11, 11, 10, 9, 11, 7, 9, 9, 7];
    const row = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(' ');
    const table = [
      row(['mode', 'K', 'B p50', 'B p99', 'goal p99', 'arrived', 'B burst/s', 'ratio', 'p99', 'burst', 'A side']),
      row([
        'alone',
        '—',
        ms(alone.latency.p50),
        ms(alone.latency.p99),
        '—',
        `${alone.latency.arrived}/${CALLS}`,
        alone.burst.rate.toFixed(0) + (alone.burst.complete ? '' : '*'),
        '—',
        '—',
        '—',
        '—',
      ]),
      ...results.map((r) =>
        row([
          r.mode,
          String(r.k),
          ms(r.latency.p50),
          ms(r.latency.p99),
          ms(p99Goal),
          `${r.latency.arrived}/${CALLS}`,
          r.burst.rate.toFixed(0) + (r.burst.complete ? '' : '*'),
          (r.burst.rate / alone.burst.rate).toFixed(2),
          verdict(p99Met(r)),
          verdict(burstMet(r)),
          r.a?.side.ok ? 'ok' : 'FAILED',
        ]),
      ),
    ];
    const missed = (met: (r: Result) => boolean) => {
      const misses = results.filter((r) => !met(r)).map((r) => `${r.mode} K=${r.k}`);
      return `met in ${results.length - misses.length} of ${results.length}${misses.length ? ` (not met: ${misses.join(', ')})` : ''}`;
    };
    const busiest = Math.max(alone.load, ...results.map((r) => r.load));
    const aFailures = results.filter((r) => !r.a?.side.ok).map((r) => `${r.mode} K=${r.k}`);
    process.stdout.write(
      [
        '',
        table.join('\n'),
        ...([alone, ...results].some((r) => !r.burst.complete)
          ? [
              '(* the burst did not complete: not every call was posted and delivered within its limit; the rate counts the deliveries that arrived)',
            ]
          : []),
        '',
        ...(baseline ? [] : ['B ALONE DID NOT GET EVERY DELIVERY: no baseline, so no goal counts as met (see its lines above)']),
        `goal p99: B's p99 beside A ≤ max(2 × ${ms(alone.latency.p99)} alone, ${P99_FLOOR_MS} ms) = ${ms(p99Goal)}, no sample lost: ${missed(p99Met)}`,
        `goal burst: B's burst beside A ≥ ${BURST_RATIO_GOAL} × ${alone.burst.rate.toFixed(0)}/s alone = ${burstGoal.toFixed(0)}/s, every delivery arrived: ${missed(burstMet)}`,
        ...(busiest > os.cpus().length
          ? [
              `machine: load average up to ${busiest.toFixed(1)} on ${os.cpus().length} CPUs: other work competed for the CPUs, so B alone (the baseline)` +
                ' and every figure beside A are slower than on a quiet machine, and the goals, set from B alone, looser; rerun when it is quiet',
            ]
          : []),
        `A's side: ${aFailures.length === 0 ? `none lost, schedule kept in all ${results.length} runs` : `FAILED in ${aFailures.join(', ')}`}`,
        '',
      ].join('\n'),
    );
  } finally {
    await bTarget?.close();
    await cleanup();
  }
}

await main();
// Nothing should be left, but a handle still open (a pool socket, a timer) must not keep the process.
process.exit(0);
