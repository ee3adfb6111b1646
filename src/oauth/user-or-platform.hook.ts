// Routes an organization user and an OAuth client may both call (calls
// ingest and reading, webhook management):
//   1. x-user-token present → the user-session check;
//   2. otherwise            → the full platform guard: Authorization: Bearer
//                             plus x-client-id and x-client-secret, all three
//                             verified (docs/interface.md §5.1).
// An access token alone is never enough: a leaked
// token without the client's secret reads and writes nothing. Only
// /oauth/userinfo takes a bare bearer token (it answers with the token's own
// user, the platform's connection test).
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { requirePlatformToken } from './platform-guard.ts';
import { requireUserToken } from '../auth/user-token.hook.ts';

export function requireUserOrPlatformToken(scope: string): preHandlerAsyncHookHandler {
  const platformGuard = requirePlatformToken(scope);
  return async function userOrPlatform(this: unknown, request: FastifyRequest, reply: FastifyReply) {
    if (request.headers['x-user-token'] !== undefined) return requireUserToken(request);
    return platformGuard.call(this as never, request, reply);
  };
}

/** OpenAPI security of those routes: x-user-token, or the three platform headers together. */
export const USER_OR_PLATFORM_SECURITY: Record<string, string[]>[] = [{ userToken: [] }, { bearer: [], clientId: [], clientSecret: [] }];
