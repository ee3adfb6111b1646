// Routes an organization user and an OAuth client may both call (calls
// ingest and reading, webhook management), in this order:
//   1. x-user-token present          → the user-session check;
//   2. x-client-id or x-client-secret → the full platform guard (all three headers must verify);
//   3. otherwise                      → a plain RFC 6750 bearer token with the route's scope.
// The three-header rule of interface §5.1 is kept for /webhooks/subscribe and
// /calls/recent, which use requirePlatformToken directly.
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { requireBearerToken, requirePlatformToken } from '../oauth/platform-guard.ts';
import { requireUserToken } from './user-token.hook.ts';

export function requireUserOrPlatformToken(scope: string): preHandlerAsyncHookHandler {
  const platformGuard = requirePlatformToken(scope);
  const bearerGuard = requireBearerToken(scope);
  return async function userOrPlatform(this: unknown, request: FastifyRequest, reply: FastifyReply) {
    if (request.headers['x-user-token'] !== undefined) return requireUserToken(request);
    const guard = request.headers['x-client-id'] !== undefined || request.headers['x-client-secret'] !== undefined ? platformGuard : bearerGuard;
    return guard.call(this as never, request, reply);
  };
}
