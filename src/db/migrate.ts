// Plain SQL migrations from /migrations, applied in file-name order, each in
// its own transaction. A session-level advisory lock serialises concurrent
// migrators: the second waits, then finds nothing left to apply.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MIGRATIONS_LOCK } from './advisory-locks.ts';
import type { Pool } from './pool.ts';

export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations');

export async function listMigrations(dir = MIGRATIONS_DIR): Promise<string[]> {
  return (await readdir(dir)).filter((name) => /^\d+_[\w-]+\.sql$/.test(name)).sort();
}

export async function migrate(pool: Pool, dir = MIGRATIONS_DIR): Promise<{ applied: string[] }> {
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1, $2)', [...MIGRATIONS_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set((await client.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((r) => r.name));
    for (const name of await listMigrations(dir)) {
      if (done.has(name)) continue;
      const sql = await readFile(path.join(dir, name), 'utf8');
      try {
        await client.query('BEGIN');
        await client.query(sql);
        await client.query('INSERT INTO schema_migrations (name) VALUES ($1)', [name]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        // The cause keeps its code: a connection lost here is told from a broken migration.
        throw new Error(`migration ${name} failed: ${(error as Error).message}`, { cause: error });
      }
      applied.push(name);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1, $2)', [...MIGRATIONS_LOCK]).catch(() => {});
    client.release();
  }
  return { applied };
}

/** The known migrations not yet applied to this database (used by /readyz). */
export async function pendingMigrations(pool: Pool, known: string[]): Promise<string[]> {
  const { rows } = await pool.query<{ name: string }>('SELECT name FROM schema_migrations');
  const done = new Set(rows.map((r) => r.name));
  return known.filter((name) => !done.has(name));
}
