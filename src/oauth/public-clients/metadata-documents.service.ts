// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document):
// a client_id that is an https URL names the document describing the client.
// The client's row in PostgreSQL is the document's cache, shared by every
// process; the document is fetched again only once the row has expired.
import type { Queryable } from '../../db/pool.ts';
import { findClient, upsertPublicClient, type OAuthClientWithSecret } from '../clients.queries.ts';
import { InvalidRequest } from '../oauth.errors.ts';
import { SUPPORTED_SCOPES } from '../scopes.ts';
import { readClientMetadata } from './client-metadata.ts';
import { fetchClientDocument, type FetchRules } from './document-fetch.ts';

export const DOCUMENT_CLIENT_ID_MAX_LENGTH = 200;

/**
 * The draft's §3: an https URL with a path, without fragment, user-info or
 * dot segments, at most 200 characters (our client_id column's bound).
 */
export function isDocumentClientId(clientId: string): boolean {
  if (!clientId.startsWith('https://') || clientId.length > DOCUMENT_CLIENT_ID_MAX_LENGTH) return false;
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return false;
  }
  if (url.hash || clientId.includes('#') || url.username || url.password) return false;
  if (url.pathname === '/' || /(^|\/)\.\.?(\/|$)/.test(clientId.slice(url.origin.length))) return false;
  return url.href === clientId;
}

export interface DocumentOptions extends FetchRules {
  /** Runs before a fetch (not before a cache hit): the per-address rate limit. */
  beforeFetch?: () => Promise<void>;
}

function refused(clientId: string, reason: string): InvalidRequest {
  return new InvalidRequest(
    `client_id ${clientId} names a client metadata document, but ${reason} (draft-ietf-oauth-client-id-metadata-document §4)`,
  );
}

/** The client a document URL names: the cached row while fresh, else the document fetched again and stored. */
export async function documentClient(db: Queryable, clientId: string, options: DocumentOptions): Promise<OAuthClientWithSecret> {
  const cached = await findClient(db, clientId);
  if (cached && cached.kind !== 'metadata_document') return cached;
  if (cached?.metadata_expires_at && cached.metadata_expires_at.getTime() > Date.now()) return cached;
  await options.beforeFetch?.();
  const fetched = await fetchClientDocument(clientId, options);
  if (!fetched.ok) throw refused(clientId, fetched.reason);
  const doc = fetched.body as Record<string, unknown> | null;
  if (doc === null || typeof doc !== 'object' || doc.client_id !== clientId) {
    throw refused(clientId, 'the document does not name itself as its client_id');
  }
  const reading = readClientMetadata(doc, { authMethodRequired: true });
  if (!reading.ok) throw refused(clientId, `its ${reading.field} ${reading.problem}`);
  return upsertPublicClient(db, {
    clientId,
    kind: 'metadata_document',
    name: reading.metadata.name ?? new URL(clientId).host,
    redirectUris: reading.metadata.redirectUris,
    scopes: [...SUPPORTED_SCOPES],
    metadataExpiresAt: new Date(Date.now() + fetched.maxAgeSeconds * 1000),
  });
}
