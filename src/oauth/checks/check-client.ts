// RFC 6749 §4.1.2.1: when client_id is missing or unknown, the authorization
// server must NOT redirect; it informs the resource owner (an error page).
import { findClient } from '../clients.queries.ts';
import { InvalidRequest } from '../oauth.errors.ts';
import type { AuthorizationCheck } from './context.ts';
import { CLIENT_ID_MAX_LENGTH } from '../../auth/tokens.ts';

export const checkClient: AuthorizationCheck = async function checkClient(ctx) {
  const raw = ctx.params.client_id;
  if (Array.isArray(raw)) throw new InvalidRequest('client_id must be given once (RFC 6749 §3.1)');
  if (typeof raw !== 'string' || raw.length === 0) throw new InvalidRequest('client_id is required (RFC 6749 §4.1.1)');
  const client = raw.length <= CLIENT_ID_MAX_LENGTH ? await findClient(ctx.db, raw) : undefined;
  if (!client) throw new InvalidRequest('client_id does not name a registered client (RFC 6749 §4.1.2.1)');
  ctx.client = client;
};
