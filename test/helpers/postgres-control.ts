// A PostgreSQL server a fault test may stop and start.
//
// In the serial phase (SB_TEST_SERIAL=1, nothing else running) of a run on the
// machine's PostgreSQL, that is the machine's own cluster, driven with
// pg_ctlcluster (Debian's wrapper; CI runs as root). Anywhere else (the
// embedded run, a lone `npm test -- file`, no root) it is a private server from
// the embedded binaries on a port of its own, so stopping it disturbs no one.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { migrate } from '../../src/db/migrate.ts';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/db/embedded-postgres.ts';
import { createTestDatabase, serverUrl } from './db.ts';

const exec = promisify(execFile);

export interface ControllablePostgres {
  /** What is being stopped, for the test output. */
  description: string;
  /** A migrated database of the test's own on that server. */
  databaseUrl: string;
  /** Stops the server the way an operator does ("fast": sessions are ended with 57P01). */
  stop(): Promise<void>;
  /** Starts it again on the same address; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Leaves the server running (started again if stopped) and drops what the test made. */
  close(): Promise<void>;
}

interface Cluster {
  version: string;
  name: string;
}

/** The Debian cluster listening on `port`, when pg_lsclusters knows one. */
async function clusterOnPort(port: number): Promise<Cluster | undefined> {
  try {
    const { stdout } = await exec('pg_lsclusters', ['--no-header']);
    for (const line of stdout.split('\n')) {
      const [version, name, clusterPort] = line.trim().split(/\s+/);
      if (version && name && Number(clusterPort) === port) return { version, name };
    }
  } catch {
    // no pg_lsclusters: not a Debian PostgreSQL
  }
  return undefined;
}

async function machineCluster(): Promise<ControllablePostgres | undefined> {
  if (process.env.SB_TEST_SERIAL !== '1' || process.getuid?.() !== 0) return undefined;
  const server = new URL(serverUrl());
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(server.hostname)) return undefined;
  const cluster = await clusterOnPort(Number(server.port || 5432));
  if (!cluster) return undefined;
  const ctl = (action: string) => exec('pg_ctlcluster', ['--skip-systemctl-redirect', cluster.version, cluster.name, action]);
  const db = await createTestDatabase(); // its pool stays idle until drop()
  let stopped = false;
  const start = async () => {
    await ctl('start');
    stopped = false;
  };
  return {
    description: `the machine's PostgreSQL cluster ${cluster.version}/${cluster.name} (pg_ctlcluster)`,
    databaseUrl: db.url,
    async stop() {
      await ctl('stop');
      stopped = true;
    },
    start,
    async close() {
      if (stopped) await start();
      await db.drop();
    },
  };
}

async function privateServer(): Promise<ControllablePostgres> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'switchboard-fault-pg-'));
  await chmod(dataDir, 0o755); // as root, PostgreSQL runs as `postgres` and must reach it
  let server: EmbeddedPostgres | undefined = await startEmbeddedPostgres(dataDir);
  const url = new URL(server.url);
  const port = Number(url.port);
  url.pathname = `/fault_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${url.pathname.slice(1)}`);
  await admin.end();
  const pool = new pg.Pool({ connectionString: url.toString(), max: 1 });
  await migrate(pool);
  await pool.end();
  return {
    description: 'a private PostgreSQL server (embedded binaries)',
    databaseUrl: url.toString(),
    async stop() {
      await server?.stop();
      server = undefined;
    },
    async start() {
      server = await startEmbeddedPostgres(dataDir, () => {}, port);
    },
    async close() {
      await server?.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export async function controllablePostgres(): Promise<ControllablePostgres> {
  return (await machineCluster()) ?? privateServer();
}
