// switchboard client create|list|delete|rotate-secret (docs/interface.md §16).
import { ClientInputError, createClient, deleteClient, listClients, rotateClientSecret } from '../../oauth/clients.service.ts';
import { parseScope, SUPPORTED_SCOPES } from '../../oauth/scopes.ts';
import type { Command } from '../command.ts';
import { optionalString, output, requirePositional, requireString, UsageError, withDatabase, type CommandContext } from '../context.ts';

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
  run: clientCreate,
};

export const clientListCommand: Command = {
  name: 'client list',
  summary: 'List the OAuth clients',
  json: '{clients: [...]}',
  run: clientList,
};

export const clientDeleteCommand: Command = {
  name: 'client delete',
  summary: 'Delete an OAuth client with its grants, tokens and subscriptions',
  arguments: [{ name: 'CLIENT_ID', description: "the client's client_id" }],
  json: '{client_id, deleted: true}',
  run: clientDelete,
};

export const clientRotateSecretCommand: Command = {
  name: 'client rotate-secret',
  summary: 'Give an OAuth client a new secret; the old one stops working at once',
  arguments: [{ name: 'CLIENT_ID', description: "the client's client_id" }],
  json: '{client_id, client_secret}',
  run: clientRotateSecret,
};

function redirectUris(ctx: CommandContext): string[] {
  const value = ctx.flags['redirect-uri'];
  const list = Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
  if (list.length === 0) throw new UsageError('--redirect-uri is required (repeat it for several)');
  return list;
}

export async function clientCreate(ctx: CommandContext) {
  const name = requireString(ctx, 'name');
  const uris = redirectUris(ctx);
  const scopesFlag = optionalString(ctx, 'scopes');
  const scopes = scopesFlag === undefined ? undefined : parseScope(scopesFlag.replace(/,/g, ' '));
  const created = await withDatabase(ctx.config, (pool) =>
    createClient(pool, { name, redirectUris: uris, ...(scopes ? { scopes } : {}) }).catch((error) => {
      throw error instanceof ClientInputError ? new UsageError(error.message) : error;
    }),
  );
  const { client_id, client_secret, redirect_uris, scopes: allowed } = created;
  output(
    ctx,
    { client_id, client_secret, redirect_uris, scopes: allowed },
    [
      `created client "${created.client.name}"`,
      `client_id:     ${client_id}`,
      `client_secret: ${client_secret}   (shown once; store it now)`,
      `redirect_uris: ${redirect_uris.join(' ')}`,
      `scopes:        ${allowed.join(' ')}`,
    ].join('\n'),
  );
}

export async function clientList(ctx: CommandContext) {
  const clients = await withDatabase(ctx.config, (pool) => listClients(pool));
  output(
    ctx,
    { clients },
    clients.map((c) => `${c.client_id}  ${c.name}  ${c.redirect_uris.join(' ')}  [${c.scopes.join(' ')}]`).join('\n') || '(no clients)',
  );
}

export async function clientDelete(ctx: CommandContext) {
  const clientId = requirePositional(ctx, 0, 'CLIENT_ID');
  const deleted = await withDatabase(ctx.config, (pool) => deleteClient(pool, clientId));
  if (!deleted) throw new UsageError(`client ${clientId} does not exist`);
  output(ctx, { client_id: clientId, deleted: true }, `deleted client ${clientId} and every token issued to it`);
}

export async function clientRotateSecret(ctx: CommandContext) {
  const clientId = requirePositional(ctx, 0, 'CLIENT_ID');
  const rotated = await withDatabase(ctx.config, (pool) => rotateClientSecret(pool, clientId));
  if (!rotated) throw new UsageError(`client ${clientId} does not exist`);
  output(ctx, rotated, `client_secret: ${rotated.client_secret}   (shown once; the previous secret no longer works)`);
}
