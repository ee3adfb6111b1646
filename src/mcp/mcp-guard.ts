// Who may call /mcp (docs/mcp.md): a bearer token alone (an exception to
// docs/interface.md §5.1), issued to a public client and so bound to
// {BASE_URL}/mcp (RFC 8707). The challenges follow RFC 6750 §3 with RFC 9728
// §5.1's resource_metadata, so an MCP client finds the authorization server
// from its first 401, and asks the user for more on a 403 (MCP's step-up).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../auth/principal.ts';
import { errorDescription } from '../oauth/oauth.errors.ts';
import { bearerToken, platformPrincipal } from '../oauth/platform-guard.ts';
import { isMcpToken } from '../oauth/public-clients/audience.ts';
import { DEFAULT_SCOPE, formatScope } from '../oauth/scopes.ts';
import { resolveAccessToken } from '../oauth/tokens.service.ts';
import type { Catalogue } from './catalogue.ts';

export function protectedResourceMetadataUrl(baseUrl: string): string {
  return `${baseUrl}/.well-known/oauth-protected-resource/mcp`;
}

/** The challenge's parameters in the order given; resource_metadata (RFC 9728 §5.1) comes first when there is no error code. */
function challenge(baseUrl: string, parts: Record<string, string>): string {
  const metadata = { resource_metadata: protectedResourceMetadataUrl(baseUrl) };
  const params = parts.error ? { ...parts, ...metadata } : { ...metadata, ...parts };
  return `Bearer ${Object.entries(params)
    .map(([name, value]) => `${name}="${errorDescription(value)}"`)
    .join(', ')}`;
}

function refuse(reply: FastifyReply, status: 401 | 403, header: string, body: { error: string; error_description: string }) {
  return reply.code(status).header('www-authenticate', header).header('cache-control', 'no-store').send(body);
}

/**
 * The principal behind the request's token, or the 401 sent: no token
 * (`Bearer resource_metadata=…, scope="calls:read"`, RFC 6750 §3.1: no error
 * code), or one that is unknown, expired, revoked, or another audience's.
 */
export async function mcpPrincipal(request: FastifyRequest, reply: FastifyReply): Promise<Principal | undefined> {
  const { baseUrl } = request.server.config;
  const token = bearerToken(request);
  if (token === undefined && !request.headers.authorization) {
    await refuse(reply, 401, challenge(baseUrl, { scope: DEFAULT_SCOPE }), {
      error: 'invalid_token',
      error_description: 'an access token is required: Authorization: Bearer <token> (RFC 6750 §2.1)',
    });
    return undefined;
  }
  const active = token === undefined ? undefined : await resolveAccessToken(request.server.db, request.server.caches, token);
  if (!active || !isMcpToken(active)) {
    const description = active
      ? `the access token was issued for the platform API, not for ${baseUrl}/mcp (RFC 8707 §2)`
      : 'the access token is invalid, expired or revoked, or its user or organization is inactive (RFC 6750 §3.1)';
    await refuse(reply, 401, challenge(baseUrl, { error: 'invalid_token', error_description: description, scope: DEFAULT_SCOPE }), {
      error: 'invalid_token',
      error_description: errorDescription(description),
    });
    return undefined;
  }
  return platformPrincipal(active);
}

/** The scopes the tools called in this JSON-RPC body need and the token lacks (tools/list needs none). */
export function missingScopes(catalogue: Catalogue, body: unknown, scopes: readonly string[]): string[] {
  const messages = Array.isArray(body) ? body : [body];
  const missing = new Set<string>();
  for (const message of messages) {
    if (!message || typeof message !== 'object' || (message as { method?: unknown }).method !== 'tools/call') continue;
    const name = (message as { params?: { name?: unknown } }).params?.name;
    const scope = typeof name === 'string' ? catalogue.byName.get(name)?.tool.scope : undefined;
    if (scope && !scopes.includes(scope)) missing.add(scope);
  }
  return [...missing];
}

/** RFC 6750 §3.1 insufficient_scope, naming the token's scopes with the missing ones, so the client asks for them all. */
export function refuseScope(request: FastifyRequest, reply: FastifyReply, scopes: readonly string[], missing: string[]) {
  const description = `this tool needs the ${missing.join(' and ')} scope, which the token lacks (RFC 6750 §3.1)`;
  const scope = formatScope([...scopes, ...missing]);
  return refuse(
    reply,
    403,
    challenge(request.server.config.baseUrl, { error: 'insufficient_scope', scope, error_description: description }),
    { error: 'insufficient_scope', error_description: errorDescription(description) },
  );
}
