// Routes an organization user and an OAuth client may both call (calls
// ingest and reading, webhook management), in this order:
//   1. x-user-token present          → the user-session check;
//   2. x-client-id or x-client-secret → the full platform guard (all three headers must verify);
//   3. otherwise                      → a plain RFC 6750 bearer token with the route's scope.
// The three-header rule of interface §5.1 is kept for /webhooks/subscribe and
// /calls/recent, which use requirePlatformToken directly.
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import * as errors from '../errors.ts';
import { bearerChallenge, bearerToken, requirePlatformToken } from '../oauth/platform-guard.ts';
import { resolveAccessToken } from '../oauth/tokens.service.ts';
import { requireUserToken } from './user-token.hook.ts';

function refuse(reply: FastifyReply, error: Error & { oauthError?: string }, oauthError: string | undefined, scope?: string): never {
  reply.header('www-authenticate', bearerChallenge(oauthError ? { code: oauthError, description: error.message, ...(scope ? { scope } : {}) } : undefined));
  reply.header('cache-control', 'no-store');
  if (oauthError) error.oauthError = oauthError;
  throw error;
}

export function requireUserOrPlatformToken(scope: string): preHandlerAsyncHookHandler {
  const platformGuard = requirePlatformToken(scope);
  return async function userOrPlatform(this: unknown, request: FastifyRequest, reply: FastifyReply) {
    if (request.headers['x-user-token'] !== undefined) return requireUserToken(request);
    if (request.headers['x-client-id'] !== undefined || request.headers['x-client-secret'] !== undefined) {
      return platformGuard.call(this as never, request, reply);
    }
    const token = bearerToken(request);
    if (token === undefined) {
      return refuse(reply, new errors.OAUTH_TOKEN_MISSING(), request.headers.authorization ? 'invalid_token' : undefined);
    }
    const active = await resolveAccessToken(request.server.db, token);
    if (!active) return refuse(reply, new errors.OAUTH_TOKEN_INVALID(), 'invalid_token');
    if (!active.scopes.includes(scope)) return refuse(reply, new errors.OAUTH_INSUFFICIENT_SCOPE(scope), 'insufficient_scope', scope);
    request.principal = {
      kind: 'oauth',
      userId: active.user_id,
      organizationId: active.organization_id,
      scopes: active.scopes,
      clientId: active.client_id,
    };
  };
}
