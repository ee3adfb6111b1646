// The database every benchmark runs on: a fresh database on DATABASE_URL's
// server, or, when it is unset, on an embedded PostgreSQL of its own in a
// temporary directory. stop() drops the database and stops and removes the
// embedded server.
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.ts';

export interface BenchDatabase {
  url: string;
  /** The embedded server's data directory (its postmaster.pid names the process whose CPU a bench reads); unset on DATABASE_URL. */
  pgdata?: string;
  stop(): Promise<void>;
}

export async function benchDatabase(): Promise<BenchDatabase> {
  const name = `switchboard_bench_${randomBytes(4).toString('hex')}`;
  let tmp: string | undefined;
  let stopEmbedded = async () => {};
  let serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'switchboard-bench-'));
    await chmod(tmp, 0o755);
    const embedded = await startEmbeddedPostgres(tmp);
    serverUrl = embedded.url;
    stopEmbedded = () => embedded.stop();
  }
  const admin = async (sql: string) => {
    const url = new URL(serverUrl);
    url.pathname = '/postgres';
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    try {
      return await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    ...(tmp ? { pgdata: path.join(tmp, 'pg') } : {}),
    async stop() {
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
      await stopEmbedded();
      if (tmp) await rm(tmp, { recursive: true, force: true });
    },
  };
}
