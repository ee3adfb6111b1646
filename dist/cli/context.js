import { openDatabase } from '../db/database.js';
import { migrate } from '../db/migrate.js';
import { createPool } from '../db/pool.js';
export class UsageError extends Error {
}
export async function withDatabase(config, fn) {
    const database = await openDatabase(config);
    const pool = createPool(database.url, 4);
    try {
        await migrate(pool);
        return await fn(pool);
    }
    finally {
        await pool.end();
        await database.stop();
    }
}
export function output(ctx, value, human) {
    process.stdout.write(ctx.json ? JSON.stringify(value) + '\n' : human + '\n');
}
export function requireString(ctx, flag) {
    const value = ctx.flags[flag];
    if (typeof value !== 'string' || value.length === 0)
        throw new UsageError(`--${flag} is required`);
    return value;
}
export function optionalString(ctx, flag) {
    const value = ctx.flags[flag];
    if (value === undefined)
        return undefined;
    if (typeof value !== 'string' || value.length === 0)
        throw new UsageError(`--${flag} needs a value`);
    return value;
}
export function requirePositional(ctx, index, name) {
    const value = ctx.positionals[index];
    if (!value)
        throw new UsageError(`${name} is required`);
    return value;
}
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export function requireUuid(name, value) {
    if (!UUID.test(value))
        throw new UsageError(`${name} must be a UUID, got "${value}"`);
    return value.toLowerCase();
}
//# sourceMappingURL=context.js.map