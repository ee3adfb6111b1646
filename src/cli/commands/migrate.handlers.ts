// What the `switchboard migrate` command does, declared in migrate.ts and loaded only when
// it runs (command.ts, handler).
import { openDatabase, type Database } from '../../db/database.ts';
import { migrate as applyMigrations } from '../../db/migrate.ts';
import { createPool, type Pool } from '../../db/pool.ts';
import { output, type CommandContext } from '../context.ts';

export async function migrate(ctx: CommandContext) {
  let pool: Pool | undefined;
  let database: Database | undefined;
  let applied: string[] = [];
  try {
    // A server gone between the check and the migrations is reported as one that never answered.
    database = await openDatabase(ctx.config, {
      prepare: async (url) => {
        pool ??= createPool(url, 1);
        ({ applied } = await applyMigrations(pool));
      },
    });
  } finally {
    await pool?.end();
    await database?.stop();
  }
  output(ctx, { applied }, applied.length ? `applied ${applied.join(', ')}` : 'database is up to date');
}
