import { handler, type Command } from '../command.ts';

export const migrateCommand: Command = {
  name: 'migrate',
  summary: 'Apply the database migrations this release brings, and exit',
  description: 'Run it once per release before restarting serve and worker (they also migrate at start; docs/operations.md, "Upgrading").',
  json: '{applied: [...]}',
  run: handler(() => import('./migrate.handlers.ts'), 'migrate'),
};
