// Each test file gets its own database, cloned from the run's migrated
// template (see scripts/test.ts), so files never see each other's rows.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPool, type Pool } from '../../src/db/pool.ts';

export function serverUrl(): string {
  const url = process.env.SB_TEST_SERVER_URL;
  if (!url) throw new Error('run tests with `npm test` (scripts/test.ts sets up the database)');
  return url;
}

export function databaseUrl(database: string): string {
  const parsed = new URL(serverUrl());
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export async function adminQuery(sql: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: databaseUrl('postgres') });
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  name: string;
  url: string;
  pool: Pool;
  drop(): Promise<void>;
}

/** A fresh, migrated database of its own. */
export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const name = `${process.env.SB_TEST_RUN_ID}_${randomBytes(5).toString('hex')}`;
  const template = options.migrated === false ? 'template0' : process.env.SB_TEST_TEMPLATE;
  await adminQuery(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  const url = databaseUrl(name);
  const pool = createPool(url, 10);
  return {
    name,
    url,
    pool,
    async drop() {
      await pool.end();
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/**
 * What the application role reaches in `table` when no organization is set:
 * [rows selected, rows an UPDATE of `column` touches, rows a DELETE removes].
 * Rolled back, so nothing changes whatever row-level security lets through.
 */
export async function reachWithoutOrganization(pool: Pool, table: string, column: string): Promise<[number, number, number]> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SET LOCAL ROLE switchboard_app');
    const select = await client.query(`SELECT count(*)::int AS n FROM ${table}`);
    const update = await client.query(`UPDATE ${table} SET ${column} = ${column}`);
    const remove = await client.query(`DELETE FROM ${table}`);
    return [select.rows[0].n, update.rowCount ?? 0, remove.rowCount ?? 0];
  } finally {
    await client.query('ROLLBACK').catch(() => {});
    client.release();
  }
}

/**
 * Commits `sql` with triggers off (session_replication_role = replica, which
 * the tests' superuser may set): the rows change and no cache notification is
 * sent (migration 0012's triggers do not fire), so a process that still
 * answers as before answers from its cache.
 */
export async function commitUnannounced(pool: Pool, sql: string, params: unknown[] = []): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SET LOCAL session_replication_role = replica');
    await client.query(sql, params);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
