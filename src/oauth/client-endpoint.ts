// Shared by the client-authenticated endpoints (token, revoke): their body
// handling and their rate limits: per
// address through the route's config.rateLimit, and per client through this
// preHandler. The client budget is keyed by client_id and address, so a
// stranger who knows a public client_id cannot exhaust the platform's budget.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RawParams } from './checks/context.ts';
import { presentedClientId } from './checks/check-client-authentication.ts';
import { InvalidRequest, TemporarilyUnavailable } from './oauth.errors.ts';

/** TOKEN_RATE_LIMIT (default 600/min) per address, for the route's config.rateLimit. */
export function tokenLimitPerIp(app: FastifyInstance) {
  return { max: app.config.tokenRateLimit.max, timeWindow: app.config.tokenRateLimit.windowMs };
}

/** Half the address budget per client and address, so one client cannot use up an address shared with others. */
export function clientRateLimit(app: FastifyInstance) {
  const check = app.createRateLimit({
    max: Math.max(1, Math.floor(app.config.tokenRateLimit.max / 2)),
    timeWindow: app.config.tokenRateLimit.windowMs,
    keyGenerator: (request) => {
      const body = request.body && typeof request.body === 'object' ? (request.body as RawParams) : {};
      return `oauth-client:${presentedClientId(body, request.headers.authorization) ?? '-'}:${request.ip}`;
    },
  });
  return async function limitPerClient(request: FastifyRequest, reply: FastifyReply) {
    const limit = await check(request);
    if (!limit.isAllowed && limit.isExceeded) {
      const seconds = Math.ceil(limit.ttlInSeconds ?? limit.ttl / 1000);
      reply.header('retry-after', String(seconds));
      throw new TemporarilyUnavailable(`too many requests for this client; retry after ${seconds} seconds`);
    }
  };
}

/** A JSON body or a parsed form; anything else is not a parameter set. */
export function paramsOf(request: FastifyRequest): RawParams {
  const body = request.body;
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body))
    throw new InvalidRequest('the request body must be a set of parameters (RFC 6749 §3.2)');
  return body as RawParams;
}

/** Parameters are validated by the named checks (RFC 6749 §5.2 errors); body schemas exist for the OpenAPI document only. */
export const documentOnly = () => () => true;
