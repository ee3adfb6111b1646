// {BASE_URL}/mcp, the Model Context Protocol's Streamable HTTP transport
// (docs/mcp.md), and its RFC 9728 protected resource metadata. On unless
// MCP_ENABLED=false. Each POST is answered alone (stateless): GET, which
// would open a server-to-client stream, and DELETE, which would end a
// session, are 405 as the transport allows.
import type { FastifyInstance } from 'fastify';
import * as errors from '../errors.ts';
import { ProtectedResourceMetadataSchema } from '../oauth/oauth.schemas.ts';
import { mcpResource } from '../oauth/public-clients/audience.ts';
import { SUPPORTED_SCOPES } from '../oauth/scopes.ts';
import { buildCatalogue } from './catalogue.ts';
import { mcpPrincipal, missingScopes, refuseScope } from './mcp-guard.ts';
import { answerMcp } from './mcp-server.ts';

/** A body that is not JSON: answered with JSON-RPC's parse error, as the transport would. */
const UNPARSABLE = Symbol('unparsable');

export function protectedResourceMetadata(baseUrl: string) {
  return {
    resource: mcpResource(baseUrl),
    authorization_servers: [baseUrl],
    scopes_supported: SUPPORTED_SCOPES.filter((s) => s === 'calls:read' || s.startsWith('locations:')),
    bearer_methods_supported: ['header'],
    resource_name: 'Switchboard MCP server',
    resource_documentation: `${baseUrl}/docs`,
  };
}

export default async function mcpPlugin(app: FastifyInstance) {
  if (!app.config.mcpEnabled) return;
  const { baseUrl } = app.config;
  const catalogue = buildCatalogue();
  const metadata = protectedResourceMetadata(baseUrl);
  const perGrant = app.createRateLimit({
    max: app.config.mcpRateLimit.max,
    timeWindow: app.config.mcpRateLimit.windowMs,
    keyGenerator: (request) => `mcp:${request.principal?.grantId ?? request.ip}`,
  });

  // RFC 9728 §3.1: the metadata of {BASE_URL}/mcp lives at the well-known path with /mcp appended; the bare one serves clients that look there.
  for (const url of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
    app.get(
      url,
      {
        schema: {
          tags: ['mcp'],
          summary: 'Protected resource metadata of /mcp (RFC 9728)',
          response: { 200: ProtectedResourceMetadataSchema },
        },
      },
      async (_request, reply) => reply.header('cache-control', 'public, max-age=300').send(metadata),
    );
  }

  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, JSON.parse(body as string));
    } catch {
      done(null, UNPARSABLE);
    }
  });

  app.post(
    '/mcp',
    {
      schema: {
        tags: ['mcp'],
        summary: 'MCP Streamable HTTP endpoint (JSON-RPC 2.0; a bearer token bound to /mcp)',
        security: [{ bearer: [] }],
      },
    },
    async (request, reply) => {
      const principal = await mcpPrincipal(request, reply);
      if (!principal) return reply;
      request.principal = principal;
      const limit = await perGrant(request);
      if (!limit.isAllowed && limit.isExceeded) throw new errors.REQUEST_RATE_LIMITED(Math.ceil(limit.ttl / 1000));
      if (request.body === UNPARSABLE) {
        return reply.code(400).send({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the body is not JSON' } });
      }
      const scopes = principal.scopes === 'all' ? [] : principal.scopes;
      const missing = missingScopes(catalogue, request.body, scopes);
      if (missing.length > 0) return refuseScope(request, reply, scopes, missing);
      const answer = await answerMcp(
        catalogue,
        app.metrics,
        { pool: app.db, caches: app.caches, config: app.config, principal },
        { headers: request.headers, body: request.body },
      );
      reply.code(answer.status);
      return answer.body === undefined ? reply.send() : reply.type('application/json').send(answer.body);
    },
  );

  app.route({
    method: ['GET', 'DELETE'],
    url: '/mcp',
    schema: { tags: ['mcp'], summary: 'Not used: the server keeps no streams or sessions (405)' },
    handler: async (_request, reply) => reply.code(405).header('allow', 'POST').send({ error: 'method_not_allowed' }),
  });
}
