// `switchboard db stop`: stops the embedded PostgreSQL that a killed `serve`
// or `worker` (kill -9) left running on DATA_DIR, without starting anything.
// `switchboard db url`: the database's connection URL, for pg_dump and psql.
import { runningEmbeddedUrl, stopEmbeddedPostgres } from '../../db/embedded-postgres.ts';
import type { Command } from '../command.ts';
import { output, UsageError, type CommandContext } from '../context.ts';

export const dbStopCommand: Command = {
  name: 'db stop',
  summary: 'Stop the embedded PostgreSQL a killed serve or worker left running in DATA_DIR',
  description:
    'Starts nothing. Refused (exit 1) while a serve, worker or other command still uses that database: stopping that process stops it. Not for DATABASE_URL.',
  json: '{stopped: true, pid} or {stopped: false} when none was running',
  run: dbStop,
};

export const dbUrlCommand: Command = {
  name: 'db url',
  summary: "Print the database's connection URL (with its password), for pg_dump or psql",
  description:
    'DATABASE_URL when it is set; otherwise the URL of the embedded PostgreSQL running in DATA_DIR, which runs while a serve or worker uses it (its port changes with each start). Starts nothing: exit 1 when none runs. docs/operations.md uses it for backups.',
  json: '{url}',
  run: dbUrl,
};

export async function dbUrl(ctx: CommandContext) {
  const url = ctx.config.databaseUrl ?? (await runningEmbeddedUrl(ctx.config.dataDir));
  if (!url) {
    throw new Error(`no embedded PostgreSQL is running in ${ctx.config.dataDir}: it runs while a serve or worker uses that DATA_DIR`);
  }
  output(ctx, { url }, url);
}

export async function dbStop(ctx: CommandContext) {
  if (ctx.config.databaseUrl) throw new UsageError('db stop stops the embedded PostgreSQL; DATABASE_URL is set, so there is none to stop');
  const { stopped, inUseBy } = await stopEmbeddedPostgres(ctx.config.dataDir);
  if (inUseBy.length > 0) {
    throw new Error(
      `the embedded PostgreSQL in ${ctx.config.dataDir} is in use by process ${inUseBy.join(', ')}; stop that process instead (it stops the database when it stops)`,
    );
  }
  output(
    ctx,
    stopped === undefined ? { stopped: false } : { stopped: true, pid: stopped },
    stopped === undefined
      ? `no embedded PostgreSQL is running in ${ctx.config.dataDir}`
      : `stopped the embedded PostgreSQL (pid ${stopped}) in ${ctx.config.dataDir}`,
  );
}
