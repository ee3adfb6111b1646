// bench:api's MCP row: a tools/call of list_recent_calls at /mcp against
// GET /calls/recent on the same server, interleaved (measurePaired with both
// sides on the server's process). The budget (docs/performance.md) is CPU per
// request: at most 6× that of GET /calls/recent. The official SDK's server
// costs several times a bare route by itself; what Switchboard adds is kept
// to a lookup in the tools built once (src/mcp/catalogue.ts).
import type { Pool } from '../src/db/pool.ts';
import { withTransaction } from '../src/db/transaction.ts';
import { upsertPublicClient } from '../src/oauth/clients.queries.ts';
import { mcpResource } from '../src/oauth/public-clients/audience.ts';
import { SUPPORTED_SCOPES } from '../src/oauth/scopes.ts';
import { createGrant, issueTokenPair, type TokenTtls } from '../src/oauth/tokens.service.ts';

export const MCP_BUDGET = 6;

/** A public client's access token bound to {baseUrl}/mcp, as the consent page and the token endpoint would issue it. */
export async function mcpBenchToken(
  pool: Pool,
  ttls: TokenTtls,
  input: { baseUrl: string; userId: string; organizationId: string },
): Promise<string> {
  return withTransaction(pool, async (tx) => {
    const client = await upsertPublicClient(tx, {
      clientId: 'bench-assistant',
      kind: 'registered',
      name: 'Bench Assistant',
      redirectUris: ['http://127.0.0.1/callback'],
      scopes: [...SUPPORTED_SCOPES],
      metadataExpiresAt: null,
    });
    const grant = await createGrant(tx, {
      clientUuid: client.id,
      userId: input.userId,
      organizationId: input.organizationId,
      scopes: ['calls:read'],
      resource: mcpResource(input.baseUrl),
    });
    return (await issueTokenPair(tx, ttls, { grantId: grant.id, accessScopes: ['calls:read'], refreshScopes: ['calls:read'] }))
      .access_token;
  });
}

/** autocannon options of the row: one JSON-RPC tools/call per request, as the SDK client sends it. */
export function mcpRowOptions(serverUrl: string, token: string, connections: number) {
  return {
    url: `${serverUrl}/mcp`,
    connections,
    method: 'POST' as const,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_recent_calls', arguments: { limit: 10 } } }),
  };
}

/** The verdict line: CPU per tools/call against CPU per GET /calls/recent, measured in the same slices. */
export function mcpBudgetVerdict(rowUs: number, recentUs: number): string {
  const ratio = rowUs / recentUs;
  return `mcp tools/call ${ratio.toFixed(2)}× the server CPU of GET /calls/recent (budget ≤${MCP_BUDGET}, ${ratio <= MCP_BUDGET ? 'ok' : 'OVER BUDGET'})`;
}
