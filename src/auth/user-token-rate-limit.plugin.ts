// RATE_LIMIT per x-user-token on the tenant resources (/locations and
// /service-areas share one budget per token). One limiter instance serves
// every route that uses it, so the in-memory store is shared as well; with
// Redis the counter lives there and every instance draws on the same budget.
//
// It runs at onRequest, before authentication and body parsing, so floods
// cost neither a database query nor JSON parsing. The key is a hash of the
// token: raw tokens never reach Redis or the process memory of the limiter.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { hashToken, USER_TOKEN_MAX_LENGTH } from './tokens.ts';
import { presentedUserTokenHash } from './user-token.hook.ts';

export type RateLimitHook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

declare module 'fastify' {
  interface FastifyInstance {
    userTokenRateLimit: RateLimitHook;
  }
}

/** Requests without a token are counted per client address instead. */
export function userTokenRateLimitKey(request: FastifyRequest): string {
  const token = request.headers['x-user-token'];
  if (typeof token === 'string' && token.length > 0) {
    // The hash the session is then found by (one per request); one too long to be ours is refused later, and hashed here alone.
    const hash = token.length <= USER_TOKEN_MAX_LENGTH ? presentedUserTokenHash(request) : hashToken(token);
    return `user-token:${hash.toString('base64url')}`;
  }
  return `ip:${request.ip}`;
}

async function userTokenRateLimit(app: FastifyInstance) {
  const hook = app.rateLimit({
    max: app.config.rateLimit.max,
    timeWindow: app.config.rateLimit.windowMs,
    keyGenerator: userTokenRateLimitKey,
  }) as unknown as RateLimitHook;
  app.decorate('userTokenRateLimit', hook);
}

export default fp(userTokenRateLimit, { name: 'user-token-rate-limit', dependencies: ['@fastify/rate-limit'] });
