import { clientRateLimit, documentOnly, paramsOf, tokenLimitPerIp } from './client-endpoint.js';
import { OAuthErrorSchema, TokenRequestBody, TokenResponseSchema } from './oauth.schemas.js';
import { exchangeToken } from './token.service.js';
export default async function tokenRoutes(app) {
    app.post('/oauth/token', {
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
    }, async (request, reply) => {
        const tokens = await exchangeToken(app.db, app.config, paramsOf(request), request.headers.authorization);
        return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(tokens);
    });
}
//# sourceMappingURL=token.route.js.map