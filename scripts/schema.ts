// `npm run schema`: after adding a migration, record it in
// migrations/SHA256SUMS and regenerate db/schema.sql from a database the
// migrations just made (a throwaway database on DATABASE_URL's server, or an
// embedded PostgreSQL in a temporary directory). It refuses, changing nothing,
// when a committed migration was edited, renamed or removed.
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { type EmbeddedPostgres, startEmbeddedPostgres } from '../src/db/embedded-postgres.ts';
import { MIGRATIONS_DIR, migrate } from '../src/db/migrate.ts';
import { renderLiveSchema, SCHEMA_FILE } from './live-schema.ts';
import { checkManifest, hashMigrations, MANIFEST_NAME, readManifest, renderManifest } from './migration-manifest.ts';

const ROOT = path.resolve(MIGRATIONS_DIR, '..');

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function admin(serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: withDatabase(serverUrl, 'postgres') });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Migrates a throwaway database and renders its schema. */
async function liveSchema(): Promise<string> {
  let embedded: EmbeddedPostgres | undefined;
  let tmp: string | undefined;
  let serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'switchboard-schema-'));
    await chmod(tmp, 0o755); // as root, PostgreSQL runs as `postgres` and must reach its directory
    embedded = await startEmbeddedPostgres(tmp);
    serverUrl = embedded.url;
  }
  const database = `sb_schema_${randomBytes(4).toString('hex')}`;
  try {
    await admin(serverUrl, `CREATE DATABASE ${database} TEMPLATE template0`);
    const pool = new pg.Pool({ connectionString: withDatabase(serverUrl, database), max: 1 });
    try {
      await migrate(pool);
      return await renderLiveSchema(pool);
    } finally {
      await pool.end();
    }
  } finally {
    await admin(serverUrl, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => {});
    await embedded?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const actual = await hashMigrations(MIGRATIONS_DIR);
  const recorded = await readManifest(MIGRATIONS_DIR);
  const { broken, unrecorded } = checkManifest(recorded, actual);
  if (broken.length > 0) {
    process.stderr.write(`schema: nothing written.\n${broken.map((line) => `- ${line}\n`).join('')}`);
    process.exit(1);
  }
  const schema = await liveSchema();
  for (const name of unrecorded) recorded.set(name, actual.get(name)!);
  await writeFile(path.join(MIGRATIONS_DIR, MANIFEST_NAME), renderManifest(recorded));
  await writeFile(path.join(ROOT, SCHEMA_FILE), schema);
  const added = unrecorded.length > 0 ? `; recorded ${unrecorded.join(', ')} in migrations/${MANIFEST_NAME}` : '';
  process.stdout.write(`schema: wrote ${SCHEMA_FILE} (${actual.size} migrations)${added}\n`);
}

await main();
