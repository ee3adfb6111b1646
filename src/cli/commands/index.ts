// The command table: "group verb" → handler. Usage text is generated from it.
import type { CommandContext } from '../context.ts';
import { clientCreate, clientDelete, clientList, clientRotateSecret } from './clients.ts';
import { agentCreate, callComplete } from './calls.ts';
import { demo } from './demo.ts';
import { migrate } from './migrate.ts';
import { orgCreate, orgDeactivate, orgList } from './orgs.ts';
import { serve, worker } from './serve.ts';
import { userCreate, userDeactivate, userList, userTokenCreate } from './users.ts';

export interface Command {
  usage: string;
  run(ctx: CommandContext): Promise<void>;
}

export const COMMANDS: Record<string, Command> = {
  serve: { usage: 'serve [--no-worker]', run: serve },
  worker: { usage: 'worker', run: worker },
  migrate: { usage: 'migrate', run: migrate },
  'org create': { usage: 'org create --name N', run: orgCreate },
  'org list': { usage: 'org list', run: orgList },
  'org deactivate': { usage: 'org deactivate ORG_ID', run: orgDeactivate },
  'user create': { usage: 'user create --email E --password P --org ORG_ID [--name N] [--role owner|admin|member]', run: userCreate },
  'user list': { usage: 'user list [--org ORG_ID]', run: userList },
  'user deactivate': { usage: 'user deactivate --email E', run: userDeactivate },
  'user-token create': { usage: 'user-token create --email E [--org ORG_ID]', run: userTokenCreate },
  'client create': { usage: 'client create --name N --redirect-uri URI [--redirect-uri URI2] [--scopes "a b"]', run: clientCreate },
  'client list': { usage: 'client list', run: clientList },
  'client delete': { usage: 'client delete CLIENT_ID', run: clientDelete },
  'client rotate-secret': { usage: 'client rotate-secret CLIENT_ID', run: clientRotateSecret },
  'agent create': { usage: 'agent create --org ORG_ID --name N', run: agentCreate },
  demo: { usage: 'demo [--redirect-uri URI]', run: demo },
  'call complete': {
    usage: 'call complete --org ORG_ID --summary S --duration SECONDS [--agent AGENT_ID] [--idempotency-key KEY]',
    run: callComplete,
  },
};
