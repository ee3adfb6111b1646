import { openDatabase } from '../../db/database.ts';
import { migrate as applyMigrations } from '../../db/migrate.ts';
import { createPool } from '../../db/pool.ts';
import type { Command } from '../command.ts';
import { output, type CommandContext } from '../context.ts';

export const migrateCommand: Command = {
  name: 'migrate',
  summary: 'Apply the database migrations this release brings, and exit',
  description: 'Run it once per release before restarting serve and worker (they also migrate at start; docs/operations.md, "Upgrading").',
  json: '{applied: [...]}',
  run: migrate,
};

export async function migrate(ctx: CommandContext) {
  const database = await openDatabase(ctx.config);
  const pool = createPool(database.url, 1);
  try {
    const { applied } = await applyMigrations(pool);
    output(ctx, { applied }, applied.length ? `applied ${applied.join(', ')}` : 'database is up to date');
  } finally {
    await pool.end();
    await database.stop();
  }
}
