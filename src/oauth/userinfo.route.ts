// GET|POST /oauth/userinfo: the platform's connection test (docs/interface.md §4.1, §10.4).
// Any valid bearer token (RFC 6750 §2.1) may call it; no scope is needed.
import type { FastifyInstance } from 'fastify';
import { InvalidToken } from './oauth.errors.ts';
import { OAuthErrorSchema, UserinfoSchema } from './oauth.schemas.ts';
import { bearerChallenge, bearerToken } from './platform-guard.ts';
import { isMcpToken } from './public-clients/audience.ts';
import { resolveAccessToken } from './tokens.service.ts';

export default async function userinfoRoutes(app: FastifyInstance) {
  app.route({
    method: ['GET', 'POST'],
    url: '/oauth/userinfo',
    schema: {
      tags: ['oauth'],
      summary: 'The signed-in user and organization of a bearer token',
      security: [{ bearer: [] }],
      response: { 200: UserinfoSchema, 401: OAuthErrorSchema },
    },
    handler: async (request, reply) => {
      const token = bearerToken(request);
      if (token === undefined) {
        // RFC 6750 §3.1: no error code in the challenge when no credentials were sent.
        if (!request.headers.authorization) reply.header('www-authenticate', bearerChallenge());
        throw new InvalidToken('an access token is required: Authorization: Bearer <token> (RFC 6750 §2.1)');
      }
      const active = await resolveAccessToken(app.db, app.caches, token);
      if (!active)
        throw new InvalidToken('the access token is invalid, expired or revoked, or its user or organization is inactive (RFC 6750 §3.1)');
      if (isMcpToken(active)) throw new InvalidToken('the access token is bound to another resource, {BASE_URL}/mcp (RFC 8707 §2)');
      return reply.header('cache-control', 'no-store').send({
        sub: active.user_id,
        email: active.email,
        name: active.user_name ?? active.email,
        organization: { id: active.organization_id, name: active.organization_name },
      });
    },
  });
}
