// Authenticates the x-user-token header: one indexed query, or the process
// cache (src/cache), whose entries a sign-out or deactivation evicts in every
// process (the *_cache_* triggers).
import type { FastifyRequest } from 'fastify';
import * as errors from '../errors.ts';
import { resolveSession } from './sessions.service.ts';
import { USER_TOKEN_MAX_LENGTH } from './tokens.ts';

/** The x-user-token header, or the 401 its absence or length earns; no database involved. */
export function presentedUserToken(request: FastifyRequest): string {
  const token = request.headers['x-user-token'];
  if (typeof token !== 'string' || token.length === 0) throw new errors.AUTH_TOKEN_MISSING();
  if (token.length > USER_TOKEN_MAX_LENGTH) throw new errors.AUTH_TOKEN_INVALID();
  return token;
}

export async function requireUserToken(request: FastifyRequest): Promise<void> {
  const token = presentedUserToken(request);
  const session = await resolveSession(request.server.db, request.server.caches, token);
  if (!session) throw new errors.AUTH_TOKEN_INVALID();
  request.principal = {
    kind: 'user',
    userId: session.user_id,
    organizationId: session.organization_id,
    scopes: 'all',
    session,
  };
}
