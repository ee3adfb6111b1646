// POST /oauth/token (RFC 6749 §3.2, §4.1.3, §6).
import type { FastifyInstance } from 'fastify';
import { clientRateLimit, documentOnly, paramsOf, tokenLimitPerIp } from './client-endpoint.ts';
import { OAuthErrorSchema, TokenRequestBody, TokenResponseSchema } from './oauth.schemas.ts';
import { exchangeToken } from './token-endpoint.service.ts';
import type { SecretBox } from '../crypto/secret-box.ts';

export default async function tokenRoutes(app: FastifyInstance, options: { refreshSuccessors: SecretBox }) {
  const { refreshSuccessors } = options;
  app.post(
    '/oauth/token',
    {
      config: { rateLimit: tokenLimitPerIp(app) },
      preHandler: clientRateLimit(app),
      validatorCompiler: documentOnly,
      schema: {
        tags: ['oauth'],
        summary: 'Token endpoint: authorization_code and refresh_token grants',
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        body: TokenRequestBody,
        response: { 200: TokenResponseSchema, 400: OAuthErrorSchema, 401: OAuthErrorSchema, 429: OAuthErrorSchema },
      },
    },
    async (request, reply) => {
      const tokens = await exchangeToken(
        app.db,
        app.config,
        refreshSuccessors,
        paramsOf(request),
        request.headers.authorization,
        app.caches,
      );
      return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(tokens);
    },
  );
}
