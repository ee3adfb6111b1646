// DATABASE_URL when given; otherwise the embedded PostgreSQL under DATA_DIR.
import type { Config } from '../config/config.ts';
import { prepareDataDir } from '../config/data-dir.ts';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres.ts';
import type { Supervision } from './embedded-supervision.ts';
import { reachDatabase, type DatabaseWait } from './reach-database.ts';

export type Database = EmbeddedPostgres;

export interface OpenOptions {
  /** The embedded PostgreSQL's own output. */
  log?: (line: string) => void;
  /** serve and worker: DATABASE_URL's server is waited for while it does not answer. */
  wait?: DatabaseWait;
  /** serve and worker: a crashed embedded server is brought back. */
  supervision?: Supervision;
  /** What must reach the database before it counts as open (the migrations): retried, or reported, as reaching it is. */
  prepare?: (url: string) => Promise<void>;
}

/**
 * DATA_DIR is checked first when anything uses it (the embedded database, a
 * generated secret.key); DATABASE_URL's server must then answer, through
 * `prepare`: with `wait` it is waited for, without it an unreachable server
 * throws DatabaseUnreachableError.
 */
export async function openDatabase(config: Config, options: OpenOptions = {}): Promise<Database> {
  if (!config.databaseUrl || !config.secretKey) await prepareDataDir(config.dataDir);
  const { databaseUrl } = config;
  if (databaseUrl) {
    await reachDatabase('DATABASE_URL', databaseUrl, options.wait, options.prepare && (() => options.prepare!(databaseUrl)));
    return { url: databaseUrl, stop: async () => {} };
  }
  const database = await startEmbeddedPostgres(config.dataDir, options.log, undefined, options.supervision);
  try {
    await options.prepare?.(database.url);
  } catch (error) {
    await database.stop().catch(() => {});
    throw error;
  }
  return database;
}
