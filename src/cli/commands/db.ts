// `switchboard db stop`: stops the embedded PostgreSQL that a killed `serve`
// or `worker` (kill -9) left running on DATA_DIR, without starting anything.
import { stopEmbeddedPostgres } from '../../db/embedded-postgres.ts';
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
