// RFC 6749 §4.1.2.1: when client_id is missing or unknown, the authorization
// server must NOT redirect; it informs the resource owner (an error page).
// A client_id that is an https URL names a Client ID Metadata Document
// (draft-ietf-oauth-client-id-metadata-document §3), fetched when not cached.
import { CLIENT_ID_MAX_LENGTH } from '../../auth/tokens.ts';
import { findClient } from '../clients.queries.ts';
import { InvalidRequest } from '../oauth.errors.ts';
import { documentClient, isDocumentClientId } from '../public-clients/metadata-documents.service.ts';
import type { AuthorizationCheck } from './context.ts';

export const checkClient: AuthorizationCheck = async function checkClient(ctx) {
  const raw = ctx.params.client_id;
  if (Array.isArray(raw)) throw new InvalidRequest('client_id must be given once (RFC 6749 §3.1)');
  if (typeof raw !== 'string' || raw.length === 0) throw new InvalidRequest('client_id is required (RFC 6749 §4.1.1)');
  if (raw.length > CLIENT_ID_MAX_LENGTH) throw new InvalidRequest('client_id does not name a registered client (RFC 6749 §4.1.2.1)');
  const client =
    ctx.documents && isDocumentClientId(raw) ? await documentClient(ctx.db, raw, ctx.documents) : await findClient(ctx.db, raw);
  if (!client || (!ctx.documents && client.kind === 'metadata_document')) {
    throw new InvalidRequest('client_id does not name a registered client (RFC 6749 §4.1.2.1)');
  }
  ctx.client = client;
};
