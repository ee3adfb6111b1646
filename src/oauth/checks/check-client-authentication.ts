// RFC 6749 §2.3.1: a confidential client authenticates with HTTP Basic
// (client_secret_basic) or with client_id and client_secret in the body
// (client_secret_post). §2.3 tells clients not to use both; some widely used
// libraries still repeat their Basic credentials in the body, so a body that
// repeats them exactly is accepted and one that contradicts them is refused.
// Any failure is invalid_client, 401 (§5.2); the route adds WWW-Authenticate.
// Only the Basic scheme is client authentication here: an Authorization header
// with another scheme (Zapier's OAuth2 template adds `Bearer <access token>` to
// every request, the refresh call included) carries nothing this endpoint uses,
// so it is ignored and the body credentials decide.
// A public client (RFC 6749 §2.1; token_endpoint_auth_method none, RFC 7591
// §2) sends its client_id alone: it has no secret, and PKCE stands in for it.
import { secretsEqual } from '../../auth/tokens.ts';
import { authenticateClient, findPublicClient } from '../clients.service.ts';
import { InvalidClient, InvalidRequest } from '../oauth.errors.ts';
import { stringParam, type TokenRequestCheck } from './context.ts';

/** RFC 6749 §2.3.1: both halves of the Basic credential are form-urlencoded first. */
function formDecode(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}

export function parseBasicCredentials(header: string): { clientId: string; clientSecret: string } | undefined {
  const match = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  try {
    return { clientId: formDecode(decoded.slice(0, colon)), clientSecret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    return undefined;
  }
}

/** The Authorization header when its scheme is Basic (RFC 7617), else undefined: other schemes are not client authentication. */
export function basicAuthorization(header: string | undefined): string | undefined {
  return header !== undefined && /^Basic(?: |$)/i.test(header.trimStart()) ? header : undefined;
}

/** The client_id a request presents, before authenticating it (for rate-limit keys). */
export function presentedClientId(params: Record<string, unknown>, authorization: string | undefined): string | undefined {
  const basic = basicAuthorization(authorization);
  if (basic) return parseBasicCredentials(basic)?.clientId;
  return stringParam(params, 'client_id');
}

export const checkClientAuthentication: TokenRequestCheck = async function checkClientAuthentication(ctx) {
  const bodyId = stringParam(ctx.params, 'client_id');
  const bodySecret = stringParam(ctx.params, 'client_secret');
  const authorization = basicAuthorization(ctx.authorization);
  let credentials: { clientId: string; clientSecret: string };
  if (authorization !== undefined) {
    const basic = parseBasicCredentials(authorization);
    if (!basic) throw new InvalidClient('the Authorization header is not valid HTTP Basic client authentication (RFC 6749 §2.3.1)');
    if (bodySecret !== undefined && !secretsEqual(bodySecret, basic.clientSecret)) {
      throw new InvalidRequest(
        'client_secret in the body differs from the HTTP Basic credentials: use one client authentication method (RFC 6749 §2.3)',
      );
    }
    if (bodyId !== undefined && bodyId !== basic.clientId) {
      throw new InvalidRequest('client_id in the body differs from the HTTP Basic client (RFC 6749 §2.3.1)');
    }
    credentials = basic;
  } else {
    if (bodyId !== undefined && bodySecret === undefined) {
      const client = await findPublicClient(ctx.db, ctx.caches, bodyId);
      if (!client) {
        throw new InvalidClient(
          'client authentication failed: a client without a secret must be a public client (token_endpoint_auth_method none, RFC 7591 §2; RFC 6749 §2.3.1)',
        );
      }
      ctx.client = client;
      return;
    }
    if (bodyId === undefined || bodySecret === undefined) {
      throw new InvalidClient(
        'client authentication is required: HTTP Basic, or client_id and client_secret in the body (RFC 6749 §2.3.1)',
      );
    }
    credentials = { clientId: bodyId, clientSecret: bodySecret };
  }
  const client = await authenticateClient(ctx.db, ctx.caches, credentials.clientId, credentials.clientSecret);
  if (!client) throw new InvalidClient('client authentication failed: unknown client or wrong secret (RFC 6749 §5.2)');
  ctx.client = client;
};
