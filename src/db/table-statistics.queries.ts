// The catalog reads and the ANALYZE behind table-statistics.ts.
import type { Queryable } from './pool.ts';

export interface GrownTable {
  /** Schema-qualified and quoted by PostgreSQL (format %I), ready for a statement. */
  table: string;
  /** Its size now, in pages. */
  pages: number;
  /** Its size when its statistics were last gathered (pg_class.relpages; 0 if never). */
  recordedPages: number;
}

/**
 * The tables of the current schema now more than twice the size their
 * statistics record. A table never analyzed or vacuumed counts as 10 pages,
 * what the planner assumes of it, so a young table is left alone until it
 * passes 20. Reads only the catalog and each table's file size.
 */
export async function grownTables(db: Queryable): Promise<GrownTable[]> {
  const { rows } = await db.query<GrownTable>(
    `SELECT format('%I.%I', n.nspname, c.relname) AS "table", s.pages, c.relpages AS "recordedPages"
       FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
      CROSS JOIN LATERAL (SELECT (pg_relation_size(c.oid) / current_setting('block_size')::int)::int AS pages) s
      WHERE n.nspname = current_schema() AND c.relkind = 'r' AND s.pages > 2 * greatest(c.relpages, 10)
      ORDER BY s.pages DESC`,
  );
  return rows;
}

/** ANALYZE of one table from grownTables; skipped if another ANALYZE or VACUUM of it is running. */
export async function analyzeTable(db: Queryable, table: string): Promise<void> {
  await db.query(`ANALYZE (SKIP_LOCKED) ${table}`);
}
