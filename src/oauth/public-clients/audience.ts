// RFC 8707 audiences. Switchboard protects two kinds of resource: the platform
// routes (docs/interface.md §5.1), for the tokens of platform clients, and
// {BASE_URL}/mcp, for the tokens of public clients. A client's kind decides
// its tokens' audience; the stored grant records it (oauth_grants.resource).
import type { ClientKind } from '../clients.queries.ts';

export function mcpResource(issuer: string): string {
  return `${issuer}/mcp`;
}

export function isPublicKind(kind: ClientKind): boolean {
  return kind !== 'platform';
}

/** The resource a client's tokens are bound to: {BASE_URL}/mcp for public clients, null (the platform routes) otherwise. */
export function resourceOf(kind: ClientKind, issuer: string): string | null {
  return isPublicKind(kind) ? mcpResource(issuer) : null;
}

/**
 * Whether an active token is for /mcp. Its client's secret hash stands for
 * the kind here: a CHECK makes it null exactly for public clients, and the
 * token's row already carries it (app_active_access_token), so the hot path
 * needs no other column.
 */
export function isMcpToken(active: { client_secret_hash: Buffer | null }): boolean {
  return active.client_secret_hash === null;
}
