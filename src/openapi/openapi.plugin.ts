// The OpenAPI 3.1 document, generated from the same TypeBox schemas that
// validate requests and serialise responses, served at /openapi.json and rendered at /docs.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { VERSION } from '../version.ts';

interface OpenApiShape {
  paths?: Record<string, Record<string, { parameters?: { required?: boolean; in?: string; schema?: { default?: unknown } }[] }>>;
}

/**
 * A query parameter with a default (`limit`) is optional to the client, but
 * the generator lists every non-Optional TypeBox property as required; client
 * generators would then force it on every call.
 */
function optionalDefaults(doc: OpenApiShape): OpenApiShape {
  for (const item of Object.values(doc.paths ?? {})) {
    for (const operation of Object.values(item)) {
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in !== 'path' && parameter.schema?.default !== undefined) parameter.required = false;
      }
    }
  }
  return doc;
}

async function openapi(app: FastifyInstance) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Switchboard API',
        version: VERSION,
        description: 'OAuth 2.0, call.completed REST Hooks, calls, locations and service areas.',
      },
      servers: [{ url: app.config.baseUrl }],
      components: {
        securitySchemes: {
          userToken: { type: 'apiKey', in: 'header', name: 'x-user-token' },
          bearer: { type: 'http', scheme: 'bearer' },
          clientId: { type: 'apiKey', in: 'header', name: 'x-client-id', description: 'the OAuth client the bearer token was issued to' },
          clientSecret: { type: 'apiKey', in: 'header', name: 'x-client-secret', description: "that client's secret" },
        },
      },
    },
    transformObject: (document) =>
      ('openapiObject' in document ? optionalDefaults(document.openapiObject as OpenApiShape) : document.swaggerObject) as never,
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  // The rendered reference, served from the package's own assets (no CDN).
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true, uiConfig: { url: '/openapi.json', docExpansion: 'list' } });
}

export default fp(openapi, { name: 'openapi' });
