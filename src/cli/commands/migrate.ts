import { openDatabase } from '../../db/database.ts';
import { migrate as applyMigrations } from '../../db/migrate.ts';
import { createPool } from '../../db/pool.ts';
import { output, type CommandContext } from '../context.ts';

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
