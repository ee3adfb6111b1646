// Test runner: one PostgreSQL for the whole run (DATABASE_URL's server, or an
// embedded one in a temporary directory), one migrated template database, and
// every test file clones its own database from it so files run in parallel.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../src/db/embedded-postgres.ts';
import { migrate } from '../src/db/migrate.ts';
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

async function main() {
  const files = process.argv.slice(2).length ? process.argv.slice(2) : await findTests('test');
  const runId = `sbt_${randomBytes(4).toString('hex')}`;
  let embedded: EmbeddedPostgres | undefined;
  let tmp: string | undefined;
  let serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'switchboard-test-'));
    await chmod(tmp, 0o755); // as root, PostgreSQL runs as `postgres` and must reach its directory
    embedded = await startEmbeddedPostgres(tmp);
    serverUrl = embedded.url;
    process.stdout.write(`tests: embedded PostgreSQL in ${tmp}\n`);
  } else {
    process.stdout.write(`tests: PostgreSQL at ${new URL(serverUrl).host}\n`);
  }

  const template = `${runId}_template`;
  // A throwaway CA trusted by the test processes, for real HTTPS webhook targets.
  const tlsDir = await mkdtemp(path.join(os.tmpdir(), 'switchboard-test-tls-'));
  let code = 1;
  try {
    const tls = await generateTestTls(tlsDir);
    await adminQuery(serverUrl, `CREATE DATABASE ${template}`);
    const pool = new pg.Pool({ connectionString: withDatabase(serverUrl, template), max: 1 });
    await migrate(pool);
    await pool.end();

    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--test', `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 3}`, '--test-timeout=120000', ...files],
      {
        stdio: 'inherit',
        env: {
          ...process.env,
          SB_TEST_SERVER_URL: serverUrl,
          SB_TEST_TEMPLATE: template,
          SB_TEST_RUN_ID: runId,
          DATABASE_URL: '',
          NODE_EXTRA_CA_CERTS: tls.caCertPath,
          SB_TEST_TLS_CERT: tls.certPath,
          SB_TEST_TLS_KEY: tls.keyPath,
        },
      },
    );
    code = await new Promise<number>((resolve) => child.on('exit', (exitCode) => resolve(exitCode ?? 1)));
  } finally {
    const { rows } = await adminQuery(serverUrl, `SELECT datname FROM pg_database WHERE datname LIKE '${runId}%'`);
    for (const { datname } of rows as { datname: string }[]) {
      await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`).catch(() => {});
    }
    await embedded?.stop();
    await rm(tlsDir, { recursive: true, force: true });
    if (tmp) await rm(tmp, { recursive: true, force: true });
  }
  process.exit(code);
}

await main();
