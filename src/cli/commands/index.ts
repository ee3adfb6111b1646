// Every command of the `switchboard` executable, in the order `--help` lists
// them. Each group's file declares its commands (name, options, help text);
// what they do is in <group>.handlers.ts, loaded only when one of them runs
// (command.ts, handler). Add a new one here.
import type { Command } from '../command.ts';
import { alertsTestCommand } from './alerts.ts';
import { agentCreateCommand, callCompleteCommand } from './calls.ts';
import { clientCreateCommand, clientDeleteCommand, clientListCommand, clientRotateSecretCommand } from './clients.ts';
import { dbStopCommand, dbUrlCommand } from './db.ts';
import { demoCommand } from './demo.ts';
import { migrateCommand } from './migrate.ts';
import { rekeyCommand } from './rekey.ts';
import { orgCreateCommand, orgDeactivateCommand, orgListCommand } from './orgs.ts';
import { serveCommand, workerCommand } from './serve.ts';
import { userCreateCommand, userDeactivateCommand, userListCommand, userTokenCreateCommand } from './users.ts';

export const COMMANDS: readonly Command[] = [
  serveCommand,
  workerCommand,
  migrateCommand,
  dbStopCommand,
  dbUrlCommand,
  rekeyCommand,
  orgCreateCommand,
  orgListCommand,
  orgDeactivateCommand,
  userCreateCommand,
  userListCommand,
  userDeactivateCommand,
  userTokenCreateCommand,
  clientCreateCommand,
  clientListCommand,
  clientDeleteCommand,
  clientRotateSecretCommand,
  agentCreateCommand,
  callCompleteCommand,
  alertsTestCommand,
  demoCommand,
];
