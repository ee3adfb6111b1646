// Routes an organization user and the automation platform may both call
// (calls ingest, webhook management): an x-user-token when that header is
// present, otherwise the OAuth platform credentials with the route's scope.
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { requirePlatformToken } from '../oauth/platform-guard.ts';
import { requireUserToken } from './user-token.hook.ts';

export function requireUserOrPlatformToken(scope: string): preHandlerAsyncHookHandler {
  const platformGuard = requirePlatformToken(scope);
  return async function userOrPlatform(this: unknown, request: FastifyRequest, reply: FastifyReply) {
    if (request.headers['x-user-token'] !== undefined) return requireUserToken(request);
    return platformGuard.call(this as never, request, reply);
  };
}
