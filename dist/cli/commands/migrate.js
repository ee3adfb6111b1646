import { openDatabase } from '../../db/database.js';
import { migrate as applyMigrations } from '../../db/migrate.js';
import { createPool } from '../../db/pool.js';
import { output } from '../context.js';
export async function migrate(ctx) {
    const database = await openDatabase(ctx.config);
    const pool = createPool(database.url, 1);
    try {
        const { applied } = await applyMigrations(pool);
        output(ctx, { applied }, applied.length ? `applied ${applied.join(', ')}` : 'database is up to date');
    }
    finally {
        await pool.end();
        await database.stop();
    }
}
//# sourceMappingURL=migrate.js.map