// DATABASE_URL when given; otherwise the embedded PostgreSQL under DATA_DIR.
import type { Config } from '../config/config.ts';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres.ts';

export type Database = EmbeddedPostgres;

export async function openDatabase(config: Config, log: (line: string) => void = () => {}): Promise<Database> {
  if (config.databaseUrl) return { url: config.databaseUrl, owned: false, stop: async () => {} };
  return startEmbeddedPostgres(config.dataDir, log);
}
