// npm run bench:statements — PostgreSQL's instructions per completed call of
// POST /calls' outbox statements, counted, not timed.
//
// A CPU figure taken beside other work moves by 10–20 % between runs on a
// shared machine; an instruction count does not. This starts the embedded
// PostgreSQL's own binaries under valgrind's callgrind (every backend counted
// from its start to its exit), writes calls through the same functions POST
// /calls uses (insertCompletedCalls, a batch of the group commit; and
// insertCompletedCall, a call alone), one transaction each as
// withOrgOneStatement sends it, and reports the difference between a backend
// that wrote `--warm` transactions and one that wrote `--warm` + `--batches`,
// per call: connection start-up, the statement's first planning and
// warming-up cancel out. A first round warms the tables (its figure is a few
// per cent lower and is not counted); the median of the next three is printed,
// and those agree to within about half a per cent.
//
// `--vs <checkout>` measures another checkout's statements (say, the commit
// before a change: `git worktree add /tmp/before <commit>`, then `npm ci` there)
// in a database of its own on the same server, with its own migrations and
// functions, and prints the ratio. Needs valgrind (Debian's package). Options:
// --batch N (calls per batch, default 16), --batches B (default 40), --warm W
// (default 5), --seed S (calls already stored, default 10,000). Expect a few
// minutes: valgrind runs PostgreSQL ~50 × slower.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { binaries, chownTree, ensureTraversable, runAsForRoot, SUPERUSER } from '../src/db/embedded-binaries.ts';
import type { Pool } from '../src/db/pool.ts';
import { freePort } from '../src/free-port.ts';

const { values: options } = parseArgs({
  options: {
    batch: { type: 'string', default: '16' },
    batches: { type: 'string', default: '40' },
    warm: { type: 'string', default: '5' },
    seed: { type: 'string', default: '10000' },
    vs: { type: 'string' },
  },
});
const BATCH = Number(options.batch);
const BATCHES = Number(options.batches);
const WARM = Number(options.warm);
const SEED = Number(options.seed);

/** PostgreSQL under callgrind: each process writes `cg.<pid>` in `dir` when it exits. */
async function startCountedPostgres(dir: string) {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error('bench:statements needs valgrind (apt-get install valgrind)');
  }
  const bin = await binaries();
  const owner = await runAsForRoot();
  const data = path.join(dir, 'data');
  const counts = path.join(dir, 'counts');
  await mkdir(counts);
  if (owner) {
    await ensureTraversable(dir, owner);
    await ensureTraversable(path.dirname(bin.postgres), owner);
    await chownTree(dir, owner);
  }
  const ids = owner ? { uid: owner.uid, gid: owner.gid } : {};
  execFileSync(bin.initdb, ['-D', data, '-U', SUPERUSER, '-A', 'trust', '--no-sync'], { stdio: 'ignore', ...ids });
  const port = await freePort();
  const server = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--trace-children=yes',
      '--vgdb=no',
      `--callgrind-out-file=${counts}/cg.%p`,
      bin.postgres,
      '-D',
      data,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `unix_socket_directories=${dir}`,
      // Nothing in the background: a vacuum or a flush would land in whichever backend it interrupts.
      '-c',
      'autovacuum=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'fsync=off',
    ],
    { stdio: 'ignore', ...ids },
  );
  const url = `postgres://${SUPERUSER}@127.0.0.1:${port}`;
  for (let attempt = 0; ; attempt++) {
    const client = new pg.Client(`${url}/postgres`);
    try {
      await client.connect();
      await client.end();
      break;
    } catch (error) {
      await client.end().catch(() => {});
      if (attempt > 600) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  /** Instructions of one backend, once it has exited and callgrind has written them. */
  const instructionsOf = async (pid: number) => {
    const file = path.join(counts, `cg.${pid}`);
    for (let attempt = 0; attempt < 600; attempt++) {
      const totals = existsSync(file) ? /^totals: (\d+)/m.exec(readFileSync(file, 'utf8')) : null;
      if (totals) return Number(totals[1]);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`callgrind wrote no totals for backend ${pid}`);
  };
  const stop = () =>
    new Promise<void>((resolve) => {
      server.once('exit', () => resolve());
      server.kill('SIGINT');
    });
  return { url, instructionsOf, stop };
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The functions of a checkout's sources that set up an organization and write
 * completed calls, imported from `root` (this checkout's or `--vs`'s), so each
 * side runs its own statements, migrations and SQL functions.
 */
async function loadProduct(root: string) {
  const load = (file: string) => import(pathToFileURL(path.join(root, 'src', file)).href);
  return {
    ...(await load('calls/completed-calls.queries.ts')),
    ...(await load('crypto/secret-box.ts')),
    ...(await load('db/migrate.ts')),
    ...(await load('db/pool.ts')),
    ...(await load('db/with-org.ts')),
    ...(await load('db/transaction.ts')),
    ...(await load('oauth/clients.service.ts')),
    ...(await load('oauth/tokens.service.ts')),
    ...(await load('organizations/organizations.queries.ts')),
    ...(await load('organizations/organizations.service.ts')),
    ...(await load('webhooks/subscriptions.service.ts')),
    ...(await load('tracing/trace-context.ts')),
  } as Product;
}
type Product = Record<string, (...args: unknown[]) => unknown>;

/** Calls `name` of a checkout's functions; its types are that checkout's, unknown here, so the caller says what it returns. */
function invoke<T = Promise<unknown>>(p: Product, name: string, ...args: unknown[]): T {
  return p[name]!(...args) as T;
}

/** An organization with one active call.completed subscription (so each call writes one delivery) and `SEED` calls. */
async function seed(p: Product, pool: Pool) {
  const call = <T>(name: string, ...args: unknown[]) => invoke<Promise<T>>(p, name, ...args);
  await call('migrate', pool);
  const org = await call<{ id: string }>('insertOrganization', pool, 'Bench Org');
  const user = await call<{ id: string }>('createUser', pool, {
    email: 'bench@example.com',
    password: 'bench-password',
    organizationId: org.id,
    role: 'owner',
  });
  const client = await call<{ client: { id: string }; client_id: string }>('createClient', pool, {
    name: 'Bench Platform',
    redirectUris: ['https://bench.example/cb'],
  });
  const grant = await call<{ id: string }>('withTransaction', pool, (tx: unknown) =>
    call('createGrant', tx, { clientUuid: client.client.id, userId: user.id, organizationId: org.id, scopes: ['calls:read'] }),
  );
  await call(
    'subscribe',
    {
      pool,
      secretBox: invoke(p, 'createSecretBox', randomBytes(32)),
      urlCheck: { allowPrivate: true, allowedPorts: '*' },
      maxSubscriptions: 1,
    },
    { kind: 'oauth', userId: user.id, organizationId: org.id, scopes: ['calls:read'], clientId: client.client_id, grantId: grant.id },
    { hookUrl: 'https://127.0.0.1:9/hook', secret: 'bench-secret' },
  );
  for (let stored = 0; stored < SEED; stored += 64) await writeBatch(p, pool, org.id, Math.min(64, SEED - stored));
  await pool.query('ANALYZE');
  return org.id;
}

/** `n` completed calls as the group commit writes them: one transaction, one statement. */
function writeBatch(p: Product, pool: Pool, organizationId: string, n: number) {
  const calls = Array.from({ length: n }, (_, i) => i);
  return invoke(
    p,
    'withOrgOneStatement',
    pool,
    organizationId,
    (db: unknown) =>
      invoke(p, 'insertCompletedCalls', db, {
        ids: calls.map(() => randomUUID()),
        agentIds: calls.map(() => null),
        summaries: calls.map((i) => `Customer booked a visit for next Tuesday (${i})`),
        durationsSeconds: calls.map(() => 184),
        callers: calls.map(() => null),
        keys: calls.map(() => null),
        fingerprints: calls.map(() => null),
        statuses: calls.map(() => null),
        traceContexts: calls.map(() => invoke<unknown>(p, 'newTraceContext')),
        details: calls.map(() => ({})),
      }),
    { genericPlan: true },
  );
}

/** One completed call alone, as the group commit writes a call nothing waited beside. */
function writeAlone(p: Product, pool: Pool, organizationId: string) {
  return invoke(
    p,
    'withOrgOneStatement',
    pool,
    organizationId,
    (db: unknown) =>
      invoke(p, 'insertCompletedCall', db, {
        agentId: null,
        summary: 'Customer booked a visit for next Tuesday',
        durationSeconds: 184,
      }),
    { genericPlan: true },
  );
}

/** Instructions per call of each case for the checkout at `root`, in a database of its own. */
async function measure(server: Awaited<ReturnType<typeof startCountedPostgres>>, root: string, database: string) {
  const p = await loadProduct(root);
  const newPool = (url: string) => invoke<Pool>(p, 'createPool', url, 1);
  const admin = newPool(`${server.url}/postgres`);
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
  const url = `${server.url}/${database}`;
  const setup = newPool(url);
  const organizationId = await seed(p, setup);
  await setup.end();

  /** Instructions of a fresh backend that ran `transactions` writes. */
  const backendRunning = async (transactions: number, write: (pool: Pool) => Promise<unknown>) => {
    const pool = newPool(url);
    const { rows } = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    for (let i = 0; i < transactions; i++) await write(pool);
    await pool.end();
    return server.instructionsOf(rows[0]!.pid);
  };
  const cases = [
    { name: `outbox statement, a batch of ${BATCH}`, calls: BATCH, write: (pool: Pool) => writeBatch(p, pool, organizationId, BATCH) },
    { name: 'outbox statement, a call alone', calls: 1, write: (pool: Pool) => writeAlone(p, pool, organizationId) },
  ];
  const results: { name: string; perCall: number; rounds: number[] }[] = [];
  for (const c of cases) {
    const rounds: number[] = [];
    for (let round = 0; round < 4; round++) {
      const warm = await backendRunning(WARM, c.write);
      const measured = await backendRunning(WARM + BATCHES, c.write);
      rounds.push((measured - warm) / (BATCHES * c.calls));
    }
    const counted = rounds.slice(1);
    results.push({ name: c.name, perCall: [...counted].sort((a, b) => a - b)[1]!, rounds: counted });
  }
  return results;
}

async function main() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'switchboard-statements-'));
  const server = await startCountedPostgres(dir);
  try {
    const k = (n: number) => `${(n / 1000).toFixed(1)}k`;
    console.log(`bench:statements — PostgreSQL instructions per call (callgrind), ${WARM} + ${BATCHES} transactions against ${WARM}`);
    const ours = await measure(server, ROOT, 'statements_here');
    const theirs = options.vs ? await measure(server, path.resolve(options.vs), 'statements_vs') : undefined;
    ours.forEach((row, i) => {
      const vs = theirs?.[i];
      const against = vs ? `   ${options.vs}: ${k(vs.perCall)}, ${(row.perCall / vs.perCall).toFixed(3)} ×` : '';
      console.log(`${row.name.padEnd(36)} ${k(row.perCall).padStart(8)} per call (rounds ${row.rounds.map(k).join(', ')})${against}`);
    });
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
