// Statistics gathered when a table grows, so no kept plan outlives the table
// it was made for.
//
// Every parameterised statement is prepared on its connection (pool.ts), and
// PostgreSQL keeps a generic plan per statement, made at its sixth run and
// kept until the statistics of a table it reads change. Made while a table was
// young (a fresh database's first minute), it can read the table whole where a
// tuple id or an index reaches the rows once it has grown: the outcome record
// did, for every batch (3.7 ms a batch among 60,000 deliveries,
// bench:neighbour). Autovacuum analyzes a table once a tenth of it changed,
// but only at its next round (autovacuum_naptime, a minute by default), and
// never where it is turned off. So every few seconds the worker analyzes each
// table now more than twice the size its statistics record, and PostgreSQL
// plans those statements again: at most one ANALYZE per doubling, cheap while
// the table is small, and none once autovacuum keeps up.
// worker-plans.test.ts shows a plan made on one row made again.
import type { Logger } from 'pino';
import type { Pool } from './pool.ts';
import type { PeriodicJob } from '../tasks/task.ts';
import { analyzeTable, grownTables } from './table-statistics.queries.ts';

/** How often the worker looks for grown tables (a query of the catalog). */
export const STATISTICS_CHECK_MS = 5_000;

/** Analyzes every table that has more than doubled since its statistics were gathered; returns their names. */
export async function analyzeGrownTables(pool: Pool, log?: Logger): Promise<string[]> {
  const grown = await grownTables(pool);
  for (const { table, pages, recordedPages } of grown) {
    await analyzeTable(pool, table);
    log?.debug({ table, pages, recordedPages }, 'table statistics gathered after growth');
  }
  return grown.map((g) => g.table);
}

export function tableStatisticsJob({ pool, log }: { pool: Pool; log: Logger }): PeriodicJob {
  return { name: 'table-statistics', everyMs: STATISTICS_CHECK_MS, run: () => analyzeGrownTables(pool, log) };
}
