// Test runner: one PostgreSQL for the whole run (DATABASE_URL's server, or an
// embedded one in a temporary directory), one migrated template database, and
// every test file clones its own database from it so files run in parallel,
// three at a time (TEST_CONCURRENCY), in three test processes that share them
// (scripts/shared-test-process.ts says why).
// Files named *.serial.test.ts run afterwards, one at a time, with nothing
// else running: they may stop and restart the database server or Redis
// (SB_TEST_SERIAL=1 tells them they are alone).
// It compiles dist/ first: tests import the sources as TypeScript, but the
// processes they spawn (bin/switchboard.js serve, worker, the CLI) run the
// compiled build, so that build is tested and never stale. The build is
// incremental (`tsc -b`, its build info in dist/, so removing dist/ rebuilds
// it all): when dist/ is up to date with src/ (npm ci's prepare just built
// it, or CI's first pass did), nothing is compiled again.
import { spawn, spawnSync } from 'node:child_process';
import nodeModule, { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../src/db/embedded-postgres.ts';
import { migrate } from '../src/db/migrate.ts';
import { ensureRequestRoleLogin } from '../src/db/request-pool.ts';
import { generateTestTls } from '../test/helpers/tls-certificates.ts';

async function findTests(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await findTests(full)));
    else if (entry.name.endsWith('.test.ts')) found.push(full);
  }
  return found.sort();
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function adminQuery(serverUrl: string, sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: withDatabase(serverUrl, 'postgres') });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

function build(): void {
  const tsc = path.join(path.dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin/tsc');
  const result = spawnSync(process.execPath, [tsc, '-b', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) {
    process.stderr.write('tests: npm run build failed\n');
    process.exit(1);
  }
}

// The machine may already trust a CA through NODE_EXTRA_CA_CERTS (a registry proxy's, say): the test CA is added to
// it, not put in its place, or the npm that a test runs (the upgrade test installs the previous release) is refused
// with SELF_SIGNED_CERT_IN_CHAIN.
async function withMachineCas(testCaPath: string, dir: string): Promise<string> {
  const machineCas = process.env.NODE_EXTRA_CA_CERTS;
  if (!machineCas) return testCaPath;
  const bundle = path.join(dir, 'trusted-cas.pem');
  await writeFile(bundle, `${await readFile(machineCas, 'utf8')}\n${await readFile(testCaPath, 'utf8')}`);
  return bundle;
}

// Node.js that strips types itself (22.18 and later) runs the test files as they are; older Node.js loads them through
// tsx, whose module hooks cost each test process about a second of CPU more. tsconfig.json's erasableSyntaxOnly keeps
// the sources within what stripping accepts.
const typeScriptLoader = (process.features as { typescript?: string | false }).typescript ? [] : ['--import', 'tsx'];

// Node.js 22.1 and later keep the compiled V8 code of every module in NODE_COMPILE_CACHE: every test process, and
// every server, worker and command they start, loads the same modules, so all but the first skip compiling them
// (about 0.6 s of CPU less per test process on Node 24). One directory per run, removed with it.
const compileCacheSupported = 'enableCompileCache' in nodeModule;

// Node 22 and later apply --test-timeout to each test; Node 20 to each test process as a whole, and a shared one runs
// for most of the phase (its files have a limit of their own, in scripts/shared-test-process.ts).
const testTimeout = Number(process.versions.node.split('.')[0]) >= 22 ? 240_000 : 3_600_000;

// TEST_REPEAT=N runs each given file N times, alone, one run after another, and prints how many runs of each passed:
// for a test suspected of flaking (run it beside a CPU-bound load to find timing bounds the code does not promise).
const repeat = Number(process.env.TEST_REPEAT ?? 1);

async function runRepeatedly(files: string[], times: number, runOne: (file: string) => Promise<number>): Promise<number> {
  const summary: string[] = [];
  for (const file of files) {
    let passed = 0;
    for (let run = 1; run <= times; run++) {
      process.stdout.write(`tests: ${file}, run ${run} of ${times}\n`);
      if ((await runOne(file)) === 0) passed++;
    }
    summary.push(`tests: ${passed} of ${times} runs passed: ${file}`);
  }
  process.stdout.write(`${summary.join('\n')}\n`);
  return summary.every((line) => line.startsWith(`tests: ${times} of`)) ? 0 : 1;
}

// The parallel phase's files run in a few shared test processes (scripts/shared-test-process.ts), except those
// that say in a comment they need a process of their own: "@own-test-process", with the reason (a file that changes
// the process for the files after it: OpenTelemetry's global tracer provider, zapier-platform-core's http.request).
async function splitByProcess(files: string[]): Promise<{ ownProcess: string[]; shared: string[] }> {
  const ownProcess: string[] = [];
  const shared: string[] = [];
  for (const file of files) ((await readFile(file, 'utf8')).includes('@own-test-process') ? ownProcess : shared).push(file);
  return { ownProcess, shared };
}

// How long each file took, so that the longest start first and none is left to run alone at the end: the last run
// here (kept beside npm's own caches), over test/durations.json, committed so that a fresh clone (CI's) knows too,
// where a file that mostly waits (an outage of a minute) is not told by its size. Refresh it from the cache after a
// whole run when files were added or changed much. A file in neither is placed by its size, except the browser tours
// (*.browser.test.ts), which are long whatever their size.
const DURATIONS_CACHE = path.join(ROOT, 'node_modules/.cache/switchboard/test-durations.json');
const COMMITTED_DURATIONS = path.join(ROOT, 'test/durations.json');

async function readDurationsFile(file: string): Promise<Record<string, number>> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

async function readDurations(): Promise<Record<string, number>> {
  return { ...(await readDurationsFile(COMMITTED_DURATIONS)), ...(await readDurationsFile(DURATIONS_CACHE)) };
}

async function longestFirst(files: string[]): Promise<string[]> {
  const known = await readDurations();
  // Timed files by their time, then untimed browser tours, then the rest by their size: time and size are not on one
  // scale, so each file gets a group first and a weight within it.
  const ranked = await Promise.all(
    files.map(async (file) => {
      const ms = known[path.relative(ROOT, file)];
      if (ms !== undefined) return { file, group: 0, weight: ms };
      return { file, group: file.endsWith('.browser.test.ts') ? 1 : 2, weight: (await stat(file)).size };
    }),
  );
  return ranked.sort((a, b) => a.group - b.group || b.weight - a.weight).map(({ file }) => file);
}

async function writeSharedQueue(queue: string, files: string[], processes: number): Promise<string[]> {
  await mkdir(path.join(queue, 'taken'));
  await writeFile(path.join(queue, 'files.json'), JSON.stringify(files.map((file) => path.resolve(file))));
  const entries: string[] = [];
  const shared = pathToFileURL(path.join(ROOT, 'scripts/shared-test-process.ts')).href;
  for (let i = 1; i <= processes; i++) {
    const entry = path.join(queue, `shared-test-process-${i}.test.mjs`);
    await writeFile(entry, `import ${JSON.stringify(shared)};\n`);
    entries.push(entry);
  }
  return entries;
}

async function rememberDurations(queue: string): Promise<void> {
  const durations = await readDurations();
  for (const name of await readdir(queue)) {
    if (!name.startsWith('durations-')) continue;
    for (const line of (await readFile(path.join(queue, name), 'utf8')).split('\n').filter(Boolean)) {
      const { file, ms } = JSON.parse(line) as { file: string; ms: number };
      durations[path.relative(ROOT, file)] = ms;
    }
  }
  await mkdir(path.dirname(DURATIONS_CACHE), { recursive: true });
  await writeFile(DURATIONS_CACHE, JSON.stringify(durations, null, 2));
}

async function main() {
  build();
  const args = process.argv.slice(2);
  const files: string[] = [];
  for (const arg of args.length ? args : ['test']) {
    files.push(...(arg.endsWith('.test.ts') ? [arg] : await findTests(arg)));
  }
  const runId = `sbt_${randomBytes(4).toString('hex')}`;
  let embedded: EmbeddedPostgres | undefined;
  let tmp: string | undefined;
  let serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'switchboard-test-'));
    await chmod(tmp, 0o755); // as root, PostgreSQL runs as `postgres` and must reach its directory
    const started = await startEmbeddedPostgres(tmp);
    embedded = started;
    serverUrl = started.url;
    // Its server runs in a process group of its own, so a Ctrl-C does not reach it: stop it here.
    const interrupted = (signal: NodeJS.Signals) => {
      void started
        .stop()
        .finally(() => rm(tmp!, { recursive: true, force: true }).finally(() => process.exit(signal === 'SIGINT' ? 130 : 143)));
    };
    process.once('SIGINT', interrupted);
    process.once('SIGTERM', interrupted);
    process.stdout.write(`tests: Node.js ${process.version}, embedded PostgreSQL in ${tmp}\n`);
  } else {
    process.stdout.write(`tests: Node.js ${process.version}, PostgreSQL at ${new URL(serverUrl).host}\n`);
  }

  const template = `${runId}_template`;
  // A throwaway CA trusted by the test processes, for real HTTPS webhook targets.
  const tlsDir = await mkdtemp(path.join(os.tmpdir(), 'switchboard-test-tls-'));
  const compileCache = compileCacheSupported ? await mkdtemp(path.join(os.tmpdir(), 'switchboard-test-compile-cache-')) : undefined;
  const queue = await mkdtemp(path.join(os.tmpdir(), 'switchboard-test-queue-'));
  let code = 1;
  try {
    const tls = await generateTestTls(tlsDir);
    const trustedCas = await withMachineCas(tls.caCertPath, tlsDir);
    await adminQuery(serverUrl, `CREATE DATABASE ${template}`);
    const pool = new pg.Pool({ connectionString: withDatabase(serverUrl, template), max: 1 });
    await migrate(pool);
    // Once for the run: the request role's password (every test app and spawned server derives the same one).
    await ensureRequestRoleLogin(pool, withDatabase(serverUrl, template));
    await pool.end();

    const env = {
      ...process.env,
      SB_TEST_SERVER_URL: serverUrl,
      SB_TEST_TEMPLATE: template,
      SB_TEST_RUN_ID: runId,
      DATABASE_URL: '',
      NODE_EXTRA_CA_CERTS: trustedCas,
      SB_TEST_TLS_CERT: tls.certPath,
      SB_TEST_TLS_KEY: tls.keyPath,
      ...(compileCache ? { NODE_COMPILE_CACHE: compileCache } : {}),
    };
    const runFiles = (list: string[], concurrency: string, extra: Record<string, string> = {}) => {
      if (list.length === 0) return Promise.resolve(0);
      const child = spawn(
        process.execPath,
        [...typeScriptLoader, '--test', `--test-concurrency=${concurrency}`, `--test-timeout=${testTimeout}`, ...list],
        { stdio: 'inherit', env: { ...env, ...extra } },
      );
      return new Promise<number>((resolve) => child.on('exit', (exitCode) => resolve(exitCode ?? 1)));
    };
    const serial = files.filter((file) => file.endsWith('.serial.test.ts'));
    const parallel = files.filter((file) => !file.endsWith('.serial.test.ts'));
    if (repeat > 1) {
      code = await runRepeatedly(files, repeat, (file) => runFiles([file], '1', serial.includes(file) ? { SB_TEST_SERIAL: '1' } : {}));
    } else {
      const concurrency = Number(process.env.TEST_CONCURRENCY ?? 3);
      const { ownProcess, shared } = await splitByProcess(parallel);
      const entries = await writeSharedQueue(queue, await longestFirst(shared), Math.min(concurrency, shared.length));
      const parallelCode = await runFiles([...ownProcess, ...entries], String(concurrency), { SB_TEST_QUEUE: queue });
      await rememberDurations(queue);
      if (serial.length) process.stdout.write(`tests: serial phase (${serial.length} file(s), one at a time)\n`);
      const serialCode = await runFiles(serial, '1', { SB_TEST_SERIAL: '1' });
      code = parallelCode || serialCode;
    }
  } finally {
    const { rows } = await adminQuery(serverUrl, `SELECT datname FROM pg_database WHERE datname LIKE '${runId}%'`);
    for (const { datname } of rows as { datname: string }[]) {
      await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`).catch(() => {});
    }
    await embedded?.stop();
    await rm(tlsDir, { recursive: true, force: true });
    if (compileCache) await rm(compileCache, { recursive: true, force: true });
    await rm(queue, { recursive: true, force: true });
    if (tmp) await rm(tmp, { recursive: true, force: true });
  }
  process.exit(code);
}

await main();
