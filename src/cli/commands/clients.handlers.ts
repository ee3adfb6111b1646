// What the `switchboard client` commands do, declared in clients.ts and loaded only when
// one of them runs (command.ts, handler).
import { ClientInputError, createClient, deleteClient, listClients, rotateClientSecret } from '../../oauth/clients.service.ts';
import { parseScope } from '../../oauth/scopes.ts';
import { optionalString, output, requirePositional, requireString, UsageError, withDatabase, type CommandContext } from '../context.ts';

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
