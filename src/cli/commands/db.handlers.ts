// What the `switchboard db` commands do, declared in db.ts and loaded only when
// one of them runs (command.ts, handler).
import { runningEmbeddedUrl, stopEmbeddedPostgres } from '../../db/embedded-postgres.ts';
import { output, UsageError, type CommandContext } from '../context.ts';

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
