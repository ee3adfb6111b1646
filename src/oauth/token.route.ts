// POST /oauth/token (RFC 6749 §3.2, §4.1.3, §6) and POST /oauth/revoke (RFC 7009).
// Rate limited per address and per client (by client_id and address, so a
// stranger who knows a public client_id cannot exhaust the client's budget).
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RawParams } from './checks/context.ts';
import { presentedClientId } from './checks/check-client-authentication.ts';
import { InvalidRequest, TemporarilyUnavailable } from './oauth.errors.ts';
import { OAuthErrorSchema, RevokeRequestBody, TokenRequestBody, TokenResponseSchema } from './oauth.schemas.ts';
import { exchangeToken, revokeToken } from './token.service.ts';

export const TOKEN_LIMIT_PER_IP = { max: 600, timeWindow: 60_000 };
export const TOKEN_LIMIT_PER_CLIENT = { max: 300, timeWindow: 60_000 };

function paramsOf(request: FastifyRequest): RawParams {
  const body = request.body;
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new InvalidRequest('the request body must be a set of parameters (RFC 6749 §3.2)');
  return body as RawParams;
}

// Parameters are validated by the named checks (RFC 6749 §5.2 errors); the
// body schemas exist for the OpenAPI document only.
const documentOnly = () => () => true;

export default async function tokenRoutes(app: FastifyInstance) {
  const checkClientLimit = app.createRateLimit({
    ...TOKEN_LIMIT_PER_CLIENT,
    keyGenerator: (request) => {
      const body = request.body && typeof request.body === 'object' ? (request.body as RawParams) : {};
      return `oauth-client:${presentedClientId(body, request.headers.authorization) ?? '-'}:${request.ip}`;
    },
  });
  async function clientRateLimit(request: FastifyRequest) {
    const limit = await checkClientLimit(request);
    if (!limit.isAllowed && limit.isExceeded) {
      const seconds = Math.ceil(limit.ttlInSeconds ?? limit.ttl / 1000);
      throw new TemporarilyUnavailable(`too many requests for this client; retry after ${seconds} seconds`);
    }
  }

  app.post('/oauth/token', {
    config: { rateLimit: TOKEN_LIMIT_PER_IP },
    preHandler: clientRateLimit,
    validatorCompiler: documentOnly,
    schema: {
      tags: ['oauth'],
      summary: 'Token endpoint: authorization_code and refresh_token grants',
      consumes: ['application/x-www-form-urlencoded', 'application/json'],
      body: TokenRequestBody,
      response: { 200: TokenResponseSchema, 400: OAuthErrorSchema, 401: OAuthErrorSchema, 429: OAuthErrorSchema },
    },
  }, async (request, reply) => {
    const tokens = await exchangeToken(app.db, app.config, paramsOf(request), request.headers.authorization);
    return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(tokens);
  });

  app.post('/oauth/revoke', {
    config: { rateLimit: TOKEN_LIMIT_PER_IP },
    preHandler: clientRateLimit,
    validatorCompiler: documentOnly,
    schema: {
      tags: ['oauth'],
      summary: 'Token revocation (RFC 7009): 200 whether or not the token was known',
      consumes: ['application/x-www-form-urlencoded', 'application/json'],
      body: RevokeRequestBody,
      response: { 200: Type.Null({ description: 'Revoked, or not a known token' }), 400: OAuthErrorSchema, 401: OAuthErrorSchema, 429: OAuthErrorSchema },
    },
  }, async (request, reply) => {
    await revokeToken(app.db, paramsOf(request), request.headers.authorization);
    return reply.code(200).header('cache-control', 'no-store').send();
  });
}
