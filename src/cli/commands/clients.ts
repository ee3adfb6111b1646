// switchboard client create|list|delete|rotate-secret (docs/interface.md §16).
import { SUPPORTED_SCOPES } from '../../oauth/scopes.ts';
import { handler, type Command } from '../command.ts';

export const clientCreateCommand: Command = {
  name: 'client create',
  summary: 'Register an OAuth client (an automation platform); its secret is shown once',
  options: [
    { name: 'name', value: 'N', required: true, description: 'the name the consent page shows' },
    { name: 'redirect-uri', value: 'URI', required: true, multiple: true, description: 'a redirect URI it may use' },
    {
      name: 'scopes',
      value: '"a b"',
      description: `the scopes it may ask for, space- or comma-separated; without it all of ${SUPPORTED_SCOPES.join(' ')}`,
    },
  ],
  json: '{client_id, client_secret, redirect_uris, scopes}',
  run: handler(() => import('./clients.handlers.ts'), 'clientCreate'),
};

export const clientListCommand: Command = {
  name: 'client list',
  summary: 'List the OAuth clients',
  json: '{clients: [...]}',
  run: handler(() => import('./clients.handlers.ts'), 'clientList'),
};

export const clientDeleteCommand: Command = {
  name: 'client delete',
  summary: 'Delete an OAuth client with its grants, tokens and subscriptions',
  arguments: [{ name: 'CLIENT_ID', description: "the client's client_id" }],
  json: '{client_id, deleted: true}',
  run: handler(() => import('./clients.handlers.ts'), 'clientDelete'),
};

export const clientRotateSecretCommand: Command = {
  name: 'client rotate-secret',
  summary: 'Give an OAuth client a new secret; the old one stops working at once',
  arguments: [{ name: 'CLIENT_ID', description: "the client's client_id" }],
  json: '{client_id, client_secret}',
  run: handler(() => import('./clients.handlers.ts'), 'clientRotateSecret'),
};
