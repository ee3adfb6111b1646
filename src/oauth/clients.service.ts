// OAuth clients are registered by operators (`switchboard client …`, docs/interface.md §16).
// The secret is random, shown once, and kept only as its SHA-256 hash.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { CLIENT_ID_MAX_LENGTH, CLIENT_SECRET_MAX_LENGTH, generateToken, hashToken } from '../auth/tokens.ts';
import { NAME_MAX_LENGTH } from '../http/schemas.ts';
import type { Pool, Queryable } from '../db/pool.ts';
import {
  deleteClient as deleteClientRow,
  findClient,
  insertClient,
  listClients as listClientRows,
  updateClientSecret,
  type OAuthClient,
  type OAuthClientWithSecret,
} from './clients.queries.ts';
import { printableUrl } from '../url-characters.ts';
import { redirectUriProblem } from './redirect-uri.ts';
import { readThrough, type Caches, type CacheSlot } from '../cache/caches.ts';
import { tags } from '../cache/tags.ts';
import { isSupportedScope, normalizeScopes, SUPPORTED_SCOPES } from './scopes.ts';

export class ClientInputError extends Error {}

export interface ClientView {
  client_id: string;
  name: string;
  redirect_uris: string[];
  scopes: string[];
  created_at: string;
}

export interface CreatedClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
  scopes: string[];
}

export function toClientView(client: OAuthClient): ClientView {
  return {
    client_id: client.client_id,
    name: client.name,
    redirect_uris: client.redirect_uris,
    scopes: client.scopes,
    created_at: client.created_at.toISOString(),
  };
}

/** A public identifier: 128 random bits, hex so it needs no escaping anywhere (Basic auth, URLs, headers). */
export function generateClientId(): string {
  return randomBytes(16).toString('hex');
}

export async function createClient(
  db: Queryable,
  input: { name: string; redirectUris: string[]; scopes?: string[] },
): Promise<CreatedClient & { client: OAuthClient }> {
  const name = input.name.trim();
  if (name.length < 1 || name.length > NAME_MAX_LENGTH) throw new ClientInputError(`--name must be 1 to ${NAME_MAX_LENGTH} characters`);
  if (input.redirectUris.length === 0) throw new ClientInputError('--redirect-uri is required (repeat it for several)');
  for (const uri of input.redirectUris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new ClientInputError(`--redirect-uri "${printableUrl(uri)}" ${problem}`);
  }
  const scopes = input.scopes ?? SUPPORTED_SCOPES;
  const unknown = scopes.filter((s) => !isSupportedScope(s));
  if (unknown.length > 0)
    throw new ClientInputError(`--scopes: unknown scope ${unknown.join(', ')}; supported: ${SUPPORTED_SCOPES.join(' ')}`);
  if (scopes.length === 0) throw new ClientInputError('--scopes must name at least one scope');
  const clientSecret = generateToken('sbs');
  const client = await insertClient(db, {
    clientId: generateClientId(),
    secretHash: hashToken(clientSecret),
    name,
    redirectUris: [...new Set(input.redirectUris)],
    scopes: normalizeScopes(scopes),
  });
  return { client, client_id: client.client_id, client_secret: clientSecret, redirect_uris: client.redirect_uris, scopes: client.scopes };
}

export async function listClients(db: Queryable): Promise<ClientView[]> {
  return (await listClientRows(db)).map(toClientView);
}

/**
 * Deleting a client deletes its grants, codes and tokens with it (ON DELETE
 * CASCADE). Operators do it from the CLI, another process: the serve
 * processes' caches learn of it from the oauth_clients_cache_delete trigger's notification.
 */
export function deleteClient(pool: Pool, clientId: string): Promise<boolean> {
  return deleteClientRow(pool, clientId);
}

/** A new secret; the old one stops working at once (the notification, as for deleteClient). Issued tokens stay valid. */
export async function rotateClientSecret(
  db: Queryable,
  clientId: string,
): Promise<{ client_id: string; client_secret: string } | undefined> {
  const clientSecret = generateToken('sbs');
  const client = await updateClientSecret(db, clientId, hashToken(clientSecret));
  return client ? { client_id: client.client_id, client_secret: clientSecret } : undefined;
}

/** Constant-time check of a presented secret against the stored hash. */
export function secretMatches(secretHash: Buffer, presented: string): boolean {
  return timingSafeEqual(secretHash, hashToken(presented));
}

/**
 * Registered clients in the process caches, by client_id, with their secret
 * hash: client authentication itself (the constant-time comparison) still
 * runs on every request.
 */
export const CLIENTS: CacheSlot<OAuthClientWithSecret> = { cache: 'clients' };

/** The client when both id and secret are right; undefined otherwise (no hint which one was wrong). */
export async function authenticateClient(
  db: Queryable,
  caches: Caches,
  clientId: string,
  clientSecret: string,
): Promise<OAuthClientWithSecret | undefined> {
  if (clientId.length > CLIENT_ID_MAX_LENGTH || clientSecret.length > CLIENT_SECRET_MAX_LENGTH) return undefined;
  const client = await cachedClient(db, caches, clientId);
  // Hash even for an unknown or public client so every failure takes the same time.
  const ok = secretMatches(client?.secret_hash ?? Buffer.alloc(32), clientSecret);
  return client?.secret_hash && ok ? client : undefined;
}

/** A client by its client_id, read through the clients cache (tagged so a change to the client empties it). */
function cachedClient(db: Queryable, caches: Caches, clientId: string): Promise<OAuthClientWithSecret | undefined> {
  return readThrough(
    caches,
    CLIENTS,
    clientId,
    () => findClient(db, clientId),
    (found) => [tags.client(found.client_id)],
  );
}

/** A public client (no secret: token_endpoint_auth_method none), or undefined. */
export async function findPublicClient(db: Queryable, caches: Caches, clientId: string): Promise<OAuthClientWithSecret | undefined> {
  if (clientId.length > CLIENT_ID_MAX_LENGTH) return undefined;
  const client = await cachedClient(db, caches, clientId);
  return client && client.secret_hash === null ? client : undefined;
}

export { findClient };
