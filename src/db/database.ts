// DATABASE_URL when given; otherwise the embedded PostgreSQL under DATA_DIR.
import type { Config } from '../config/config.ts';
import { prepareDataDir } from '../config/data-dir.ts';
import { startEmbeddedPostgres, type EmbeddedPostgres, type Supervision } from './embedded-postgres.ts';
import { reachDatabase, type DatabaseWait } from './reach-database.ts';

export type Database = EmbeddedPostgres;

/**
 * DATA_DIR is checked first when anything uses it (the embedded database, a
 * generated secret.key); DATABASE_URL's server must then answer: with `wait`
 * (serve, worker) it is waited for, without it an unreachable server throws.
 * With `supervision` (serve, worker) a crashed embedded server is brought back.
 */
export async function openDatabase(
  config: Config,
  log: (line: string) => void = () => {},
  wait?: DatabaseWait,
  supervision?: Supervision,
): Promise<Database> {
  if (!config.databaseUrl || !config.secretKey) await prepareDataDir(config.dataDir);
  if (config.databaseUrl) {
    await reachDatabase('DATABASE_URL', config.databaseUrl, wait);
    return { url: config.databaseUrl, stop: async () => {} };
  }
  return startEmbeddedPostgres(config.dataDir, log, undefined, supervision);
}
