// The platform guard (docs/interface.md §5.1): every request to a platform
// endpoint (/webhooks/subscribe, /calls/recent) carries three credentials:
//   Authorization: Bearer <access token>   (RFC 6750 §2.1)
//   x-client-id / x-client-secret          (the client the token was issued to)
// Missing or wrong: 401 with WWW-Authenticate: Bearer (RFC 6750 §3); a valid
// token without the scope the route needs: 403 insufficient_scope (RFC 6750 §3.1).
//
// Cost: one query on a unique index (tokens.queries.ts findActiveAccessToken),
// or none when the process cache holds the token (src/cache): revoking a
// token or grant, deactivating a user or organization and rotating the
// client's secret evict it in every process (the *_cache_* triggers). The client and
// scope checks below run on every request either way.
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { Principal } from '../auth/principal.ts';
import { CLIENT_SECRET_MAX_LENGTH } from '../auth/tokens.ts';
import * as errors from '../errors.ts';
import { secretMatches } from './clients.service.ts';
import { errorDescription } from './oauth.errors.ts';
import { isMcpToken } from './public-clients/audience.ts';
import type { ActiveAccessToken } from './tokens.queries.ts';
import { resolveAccessToken } from './tokens.service.ts';

export const REALM = 'switchboard';

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** The token from `Authorization: Bearer <token>`, or undefined when absent or not a Bearer credential. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  return BEARER.exec(header)?.[1];
}

function quoted(value: string): string {
  return `"${errorDescription(value)}"`;
}

/** RFC 6750 §3: the challenge; with no error code when no credentials were sent at all (§3.1). */
/** OpenAPI security requirement of the platform routes: all three headers at once (docs/interface.md §5.1). */
export const PLATFORM_SECURITY: Record<string, string[]>[] = [{ bearer: [], clientId: [], clientSecret: [] }];

export function bearerChallenge(error?: { code: string; description: string; scope?: string }): string {
  const parts = [`Bearer realm=${quoted(REALM)}`];
  if (error) {
    parts.push(`error=${quoted(error.code)}`, `error_description=${quoted(error.description)}`);
    if (error.scope) parts.push(`scope=${quoted(error.scope)}`);
  }
  return parts.join(', ');
}

type GuardError = Error & { statusCode?: number; oauthError?: string };

function fail(reply: FastifyReply, error: GuardError, oauthError: string | undefined, scope?: string): never {
  reply.header(
    'www-authenticate',
    bearerChallenge(oauthError ? { code: oauthError, description: error.message, ...(scope ? { scope } : {}) } : undefined),
  );
  reply.header('cache-control', 'no-store');
  if (oauthError) error.oauthError = oauthError;
  throw error;
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** The three platform headers of a request (docs/interface.md §5.1). */
export interface PlatformCredentials {
  token: string;
  clientId: string;
  clientSecret: string;
}

/** The three headers, or the 401 their absence or shape earns; no database involved. */
export function platformCredentials(request: FastifyRequest, reply: FastifyReply): PlatformCredentials {
  const token = bearerToken(request);
  if (token === undefined) {
    // A credential in the wrong shape is an invalid token; no credential at all gets a bare challenge.
    return fail(reply, new errors.OAUTH_TOKEN_MISSING(), request.headers.authorization ? 'invalid_token' : undefined);
  }
  const clientId = header(request, 'x-client-id');
  const clientSecret = header(request, 'x-client-secret');
  if (clientId === undefined || clientSecret === undefined) {
    return fail(reply, new errors.OAUTH_CLIENT_MISSING(), 'invalid_token');
  }
  return { token, clientId, clientSecret };
}

export type PlatformRefusal = 'token_invalid' | 'client_invalid' | 'insufficient_scope';

/** Whether platform credentials pass, and if not, the first check they fail. */
export type PlatformAccess<P extends ActiveAccessToken> = { ok: true; active: P } | { ok: false; refusal: PlatformRefusal };

/**
 * The guard's checks, in their order, on the active token the bearer
 * credential stands for (undefined: unknown, expired, revoked or
 * deactivated): the token, then the client it was issued to (id and secret,
 * the secret compared in constant time, both always, so a wrong id and a
 * wrong secret cost the same), then the scope. The one home of this rule:
 * the preHandler below and GET /calls/recent (recent-calls.service.ts) both decide with it.
 */
export function checkPlatformAccess<P extends ActiveAccessToken>(
  active: P | undefined,
  credentials: PlatformCredentials,
  scope: string,
): PlatformAccess<P> {
  // RFC 8707: a public client's token is bound to /mcp; here it is another audience's, not a valid token.
  if (!active || isMcpToken(active)) return { ok: false, refusal: 'token_invalid' };
  const secretHash = active.client_secret_hash ?? Buffer.alloc(32);
  const secretOk = credentials.clientSecret.length <= CLIENT_SECRET_MAX_LENGTH && secretMatches(secretHash, credentials.clientSecret);
  if (active.client_id !== credentials.clientId || !secretOk) return { ok: false, refusal: 'client_invalid' };
  if (!active.scopes.includes(scope)) return { ok: false, refusal: 'insufficient_scope' };
  return { ok: true, active };
}

/** What a token that passed the guard stands for. */
export function platformPrincipal(active: ActiveAccessToken): Principal {
  return {
    kind: 'oauth',
    userId: active.user_id,
    organizationId: active.organization_id,
    scopes: active.scopes,
    clientId: active.client_id,
    grantId: active.grant_id,
  };
}

/** The answer to platform credentials that did not verify, in the order the guard checks them. */
export function refusePlatform(reply: FastifyReply, refusal: PlatformRefusal, scope: string): never {
  if (refusal === 'token_invalid') return fail(reply, new errors.OAUTH_TOKEN_INVALID(), 'invalid_token');
  if (refusal === 'client_invalid') return fail(reply, new errors.OAUTH_CLIENT_INVALID(), 'invalid_token');
  return fail(reply, new errors.OAUTH_INSUFFICIENT_SCOPE(scope), 'insufficient_scope', scope);
}

/**
 * A Fastify preHandler for a platform endpoint that needs `scope`. On success
 * it sets request.principal = {kind: 'oauth', userId, organizationId, scopes, clientId, grantId}.
 * (GET /calls/recent reads the token and the calls together instead, and
 * decides with the same checkPlatformAccess.)
 */
export function requirePlatformToken(scope: string): preHandlerAsyncHookHandler {
  return async function platformGuard(request: FastifyRequest, reply: FastifyReply) {
    const credentials = platformCredentials(request, reply);
    const active = await resolveAccessToken(request.server.db, request.server.caches, credentials.token);
    const access = checkPlatformAccess(active, credentials, scope);
    if (!access.ok) return refusePlatform(reply, access.refusal, scope);
    request.principal = platformPrincipal(access.active);
  };
}
