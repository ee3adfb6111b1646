// POST /oauth/revoke (RFC 7009): client-authenticated; 200 for unknown tokens.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { clientRateLimit, documentOnly, paramsOf, tokenLimitPerIp } from './client-endpoint.ts';
import { OAuthErrorSchema, RevokeRequestBody } from './oauth.schemas.ts';
import { revokeToken } from './token-endpoint.service.ts';

export default async function revokeRoutes(app: FastifyInstance) {
  app.post(
    '/oauth/revoke',
    {
      config: { rateLimit: tokenLimitPerIp(app) },
      preHandler: clientRateLimit(app),
      validatorCompiler: documentOnly,
      schema: {
        tags: ['oauth'],
        summary: 'Token revocation (RFC 7009): 200 whether or not the token was known',
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        body: RevokeRequestBody,
        response: {
          200: Type.Null({ description: 'Revoked, or not a known token' }),
          400: OAuthErrorSchema,
          401: OAuthErrorSchema,
          429: OAuthErrorSchema,
        },
      },
    },
    async (request, reply) => {
      await revokeToken(app.db, paramsOf(request), request.headers.authorization, app.caches, app.config.baseUrl);
      return reply.code(200).header('cache-control', 'no-store').send();
    },
  );
}
