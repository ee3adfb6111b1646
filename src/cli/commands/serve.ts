import { handler, type Command } from '../command.ts';

export const serveCommand: Command = {
  name: 'serve',
  summary: 'Run the HTTP server, and the delivery worker unless --no-worker',
  description:
    'Opens the database (DATABASE_URL, waited for while it does not answer, or an embedded PostgreSQL in DATA_DIR), applies migrations, and listens on HOST:PORT until SIGTERM or SIGINT.',
  environment: true,
  options: [{ name: 'no-worker', description: 'serve HTTP only; deliveries are left to `switchboard worker` processes' }],
  run: handler(() => import('./serve.handlers.ts'), 'serve'),
};

export const workerCommand: Command = {
  name: 'worker',
  summary: 'Run the delivery worker only (webhook deliveries, housekeeping)',
  description: 'Serves /healthz, /readyz and /metrics on WORKER_PORT; runs until SIGTERM or SIGINT.',
  environment: true,
  run: handler(() => import('./serve.handlers.ts'), 'worker'),
};
