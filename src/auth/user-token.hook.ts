// Authenticates the x-user-token header: one indexed query, or the process
// cache (src/cache), whose entries a sign-out or deactivation evicts in every
// process (the *_cache_* triggers).
import type { FastifyRequest } from 'fastify';
import * as errors from '../errors.ts';
import { resolveSessionByHash } from './sessions.service.ts';
import { hashToken, USER_TOKEN_MAX_LENGTH } from './tokens.ts';

/** The x-user-token header, or the 401 its absence or length earns; no database involved. */
export function presentedUserToken(request: FastifyRequest): string {
  const token = request.headers['x-user-token'];
  if (typeof token !== 'string' || token.length === 0) throw new errors.AUTH_TOKEN_MISSING();
  if (token.length > USER_TOKEN_MAX_LENGTH) throw new errors.AUTH_TOKEN_INVALID();
  return token;
}

// The rate limit (onRequest) keys by the token's hash and the session is found by it: one SHA-256 per request, not two.
const hashes = new WeakMap<FastifyRequest, Buffer>();

/** hashToken of the x-user-token header, computed once per request; the same 401s as presentedUserToken. */
export function presentedUserTokenHash(request: FastifyRequest): Buffer {
  let hash = hashes.get(request);
  if (hash === undefined) {
    hash = hashToken(presentedUserToken(request));
    hashes.set(request, hash);
  }
  return hash;
}

export async function requireUserToken(request: FastifyRequest): Promise<void> {
  const session = await resolveSessionByHash(request.server.db, request.server.caches, presentedUserTokenHash(request));
  if (!session) throw new errors.AUTH_TOKEN_INVALID();
  request.principal = {
    kind: 'user',
    userId: session.user_id,
    organizationId: session.organization_id,
    scopes: 'all',
    session,
  };
}
