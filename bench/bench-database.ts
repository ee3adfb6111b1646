// The database every benchmark runs on: a fresh database on DATABASE_URL's
// server, or, when it is unset, on an embedded PostgreSQL of its own in a
// temporary directory. another() makes a further database on the same server
// (a copy of a template, say the first one once migrated), for a bench that
// wants a fresh one per run without starting a server each time. stop() drops
// them all and stops and removes the embedded server.
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
  /** The name of `url`'s database. */
  name: string;
  /** A new database on the same server, a copy of `template` (a database of that server nobody is connected to) or empty. */
  another(template?: string): Promise<{ url: string; drop(): Promise<void> }>;
  stop(): Promise<void>;
}

const newName = () => `switchboard_bench_${randomBytes(4).toString('hex')}`;

export async function benchDatabase(): Promise<BenchDatabase> {
  const name = newName();
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
  const urlOf = (database: string) => {
    const url = new URL(serverUrl);
    url.pathname = `/${database}`;
    return url.toString();
  };
  const extras = new Set<string>();
  const drop = (database: string) => admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => {});
  await admin(`CREATE DATABASE ${name}`);
  return {
    url: urlOf(name),
    name,
    ...(tmp ? { pgdata: path.join(tmp, 'pg') } : {}),
    async another(template) {
      if (template !== undefined && !/^[a-z0-9_]+$/.test(template)) throw new Error(`benchDatabase: bad template name ${template}`);
      const extra = newName();
      // A template's last connection may still be closing on the server: it refuses the copy until then.
      for (let tries = 0; ; tries++) {
        try {
          await admin(`CREATE DATABASE ${extra}${template ? ` TEMPLATE ${template}` : ''}`);
          break;
        } catch (error) {
          if (tries >= 50 || !/being accessed by other users/.test((error as Error).message)) throw error;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      extras.add(extra);
      return {
        url: urlOf(extra),
        async drop() {
          extras.delete(extra);
          await drop(extra);
        },
      };
    },
    async stop() {
      for (const extra of extras) await drop(extra);
      await drop(name);
      await stopEmbedded();
      if (tmp) await rm(tmp, { recursive: true, force: true });
    },
  };
}
