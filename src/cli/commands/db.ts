// `switchboard db stop`: stops the embedded PostgreSQL that a killed `serve`
// or `worker` (kill -9) left running on DATA_DIR, without starting anything.
// `switchboard db url`: the database's connection URL, for pg_dump and psql.
import { handler, type Command } from '../command.ts';

export const dbStopCommand: Command = {
  name: 'db stop',
  summary: 'Stop the embedded PostgreSQL a killed serve or worker left running in DATA_DIR',
  description:
    'Starts nothing. Refused (exit 1) while a serve, worker or other command still uses that database: stopping that process stops it. Not for DATABASE_URL.',
  json: '{stopped: true, pid} or {stopped: false} when none was running',
  run: handler(() => import('./db.handlers.ts'), 'dbStop'),
};

export const dbUrlCommand: Command = {
  name: 'db url',
  summary: "Print the database's connection URL (with its password), for pg_dump or psql",
  description:
    'DATABASE_URL when it is set; otherwise the URL of the embedded PostgreSQL running in DATA_DIR, which runs while a serve or worker uses it (its port changes with each start). Starts nothing: exit 1 when none runs. docs/operations.md uses it for backups.',
  json: '{url}',
  run: handler(() => import('./db.handlers.ts'), 'dbUrl'),
};
