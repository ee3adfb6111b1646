// The server (and with it every capability, about 0.6 s of CPU to load) is imported when serve or worker runs,
// not for every other command: the one-shot commands and --help start in a quarter of the time.
import type { Command } from '../command.ts';
import type { CommandContext } from '../context.ts';

export const serveCommand: Command = {
  name: 'serve',
  summary: 'Run the HTTP server, and the delivery worker unless --no-worker',
  description:
    'Opens the database (DATABASE_URL, waited for while it does not answer, or an embedded PostgreSQL in DATA_DIR), applies migrations, and listens on HOST:PORT until SIGTERM or SIGINT.',
  environment: true,
  options: [{ name: 'no-worker', description: 'serve HTTP only; deliveries are left to `switchboard worker` processes' }],
  run: serve,
};

export const workerCommand: Command = {
  name: 'worker',
  summary: 'Run the delivery worker only (webhook deliveries, housekeeping)',
  description: 'Serves /healthz, /readyz and /metrics on WORKER_PORT; runs until SIGTERM or SIGINT.',
  environment: true,
  run: worker,
};

export async function serve(ctx: CommandContext) {
  const { runUntilSignalled } = await import('../../server.ts');
  return runUntilSignalled(ctx.config, { http: true, workers: ctx.flags['no-worker'] !== true });
}

export async function worker(ctx: CommandContext) {
  const { runUntilSignalled } = await import('../../server.ts');
  return runUntilSignalled(ctx.config, { http: false, workers: true });
}
