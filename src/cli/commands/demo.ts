// switchboard demo: everything a newcomer needs to try the product at once —
// an organization, an owner who can log in, an agent, an OAuth client and a
// few completed calls (so /calls/recent has samples). Every run makes a new set.
import { handler, type Command } from '../command.ts';
import { DEFAULT_REDIRECT_URIS } from './demo-client.ts';

export const demoCommand: Command = {
  name: 'demo',
  summary: 'Seed a demo organization, its owner, an agent, an OAuth client and three calls, and print them',
  description: "Every run makes a new set; the owner's password and the client's secret are shown once.",
  options: [
    {
      name: 'redirect-uri',
      value: 'URI',
      multiple: true,
      description: `the client's redirect URI; without it ${DEFAULT_REDIRECT_URIS.join(' and ')}`,
    },
  ],
  json: '{organization, user, user_token, agent, client, calls}',
  run: handler(() => import('./demo.handlers.ts'), 'demo'),
};
