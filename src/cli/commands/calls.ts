import { handler, type Command } from '../command.ts';

export const agentCreateCommand: Command = {
  name: 'agent create',
  summary: 'Create an agent (who takes calls) in an organization',
  options: [
    { name: 'org', value: 'ORG_ID', required: true, description: 'the organization' },
    { name: 'name', value: 'N', required: true, description: "the agent's name" },
  ],
  json: '{id, name}',
  run: handler(() => import('./calls.handlers.ts'), 'agentCreate'),
};

export const callCompleteCommand: Command = {
  name: 'call complete',
  summary: "Record a completed call; fires call.completed to the organization's subscriptions",
  options: [
    { name: 'org', value: 'ORG_ID', required: true, description: 'the organization' },
    { name: 'summary', value: 'S', required: true, description: 'what the call was about' },
    { name: 'duration', value: 'SECONDS', required: true, description: 'its length in whole seconds' },
    { name: 'agent', value: 'AGENT_ID', description: 'the agent who took it' },
    {
      name: 'idempotency-key',
      value: 'KEY',
      description: "as POST /calls' Idempotency-Key: run again with the same key and options, it prints the first call and records nothing",
    },
  ],
  json: 'the completed call',
  run: handler(() => import('./calls.handlers.ts'), 'callComplete'),
};
