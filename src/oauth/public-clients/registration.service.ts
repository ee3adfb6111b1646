// RFC 7591 dynamic registration, for public clients that have no metadata
// document: anyone may register, so a registration grants nothing by itself
// (the user still consents, and sees "not verified"), is rate-limited per
// address, and is deleted after REGISTRATION_UNUSED_DAYS if nobody signed in with it.
import type { Queryable } from '../../db/pool.ts';
import { generateClientId } from '../clients.service.ts';
import { upsertPublicClient } from '../clients.queries.ts';
import { InvalidClientMetadata, InvalidRedirectUri } from '../oauth.errors.ts';
import { isLoopbackRedirect } from '../redirect-uri.ts';
import { SUPPORTED_SCOPES } from '../scopes.ts';
import { readClientMetadata } from './client-metadata.ts';
import { LOOPBACK_DESCRIPTION } from './client-description.ts';

export const REGISTRATION_UNUSED_DAYS = 30;

export interface RegisteredClient {
  client_id: string;
  client_id_issued_at: number;
  client_name: string;
  redirect_uris: string[];
  token_endpoint_auth_method: 'none';
  grant_types: string[];
  response_types: string[];
}

export async function registerPublicClient(db: Queryable, body: unknown): Promise<RegisteredClient> {
  const reading = readClientMetadata(body, { authMethodRequired: false });
  if (!reading.ok) {
    const message = `${reading.field} ${reading.problem} (RFC 7591 §2)`;
    throw reading.field === 'redirect_uris' ? new InvalidRedirectUri(message) : new InvalidClientMetadata(message);
  }
  const { redirectUris, name } = reading.metadata;
  const first = redirectUris[0]!;
  const client = await upsertPublicClient(db, {
    clientId: generateClientId(),
    kind: 'registered',
    name: name ?? (isLoopbackRedirect(first) ? LOOPBACK_DESCRIPTION : new URL(first).host),
    redirectUris,
    scopes: [...SUPPORTED_SCOPES],
    metadataExpiresAt: null,
  });
  return {
    client_id: client.client_id,
    client_id_issued_at: Math.floor(client.created_at.getTime() / 1000),
    client_name: client.name,
    redirect_uris: client.redirect_uris,
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
  };
}
