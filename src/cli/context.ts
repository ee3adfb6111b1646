// What every one-shot CLI command needs: the configuration, a migrated
// database (the running server's embedded one when there is one), and a way
// to print either a human line or exactly one JSON object.
import type { Config } from '../config/config.ts';
import type { Pool } from '../db/pool.ts';

export class UsageError extends Error {}

export interface CommandContext {
  config: Config;
  json: boolean;
  flags: Record<string, string | string[] | boolean | undefined>;
  positionals: string[];
}

export async function withDatabase<T>(config: Config, fn: (pool: Pool) => Promise<T>): Promise<T> {
  // Loaded here, not above: --help and the commands that need no database load no driver.
  const [{ setBaseUrlSetting }, { openDatabase }, { migrate }, { createPool }] = await Promise.all([
    import('../db/with-org.ts'),
    import('../db/database.ts'),
    import('../db/migrate.ts'),
    import('../db/pool.ts'),
  ]);
  setBaseUrlSetting(config.baseUrl);
  let pool: Pool | undefined;
  const database = await openDatabase(config, {
    prepare: async (url) => {
      pool ??= createPool(url, 4);
      await migrate(pool);
    },
  }).catch(async (error: unknown) => {
    await pool?.end();
    throw error;
  });
  try {
    return await fn(pool!);
  } finally {
    await pool?.end();
    await database.stop();
  }
}

export function output(ctx: CommandContext, value: unknown, human: string): void {
  process.stdout.write(ctx.json ? `${JSON.stringify(value)}\n` : `${human}\n`);
}

export function requireString(ctx: CommandContext, flag: string): string {
  const value = ctx.flags[flag];
  if (typeof value !== 'string' || value.length === 0) throw new UsageError(`--${flag} is required`);
  return value;
}

export function optionalString(ctx: CommandContext, flag: string): string | undefined {
  const value = ctx.flags[flag];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length === 0) throw new UsageError(`--${flag} needs a value`);
  return value;
}

export function requirePositional(ctx: CommandContext, index: number, name: string): string {
  const value = ctx.positionals[index];
  if (!value) throw new UsageError(`${name} is required`);
  return value;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function requireUuid(name: string, value: string): string {
  if (!UUID.test(value)) throw new UsageError(`${name} must be a UUID, got "${value}"`);
  return value.toLowerCase();
}
