// OAuth clients and tokens made through the real services (the same code the
// CLI and the token endpoint run), for tests of platform endpoints.
import type { Pool } from '../../src/db/pool.ts';
import { withTransaction } from '../../src/db/transaction.ts';
import { createClient as createClientService } from '../../src/oauth/clients.service.ts';
import type { OAuthClient } from '../../src/oauth/clients.queries.ts';
import { createGrant, issueTokenPair, type TokenResponse } from '../../src/oauth/tokens.service.ts';

export interface TestClient {
  /** Row id (uuid) of the client. */
  id: string;
  client_id: string;
  client_secret: string;
  name: string;
  redirect_uris: string[];
  scopes: string[];
  client: OAuthClient;
}

export async function createClient(
  pool: Pool,
  opts: { name?: string; redirectUris?: string[]; scopes?: string[] } = {},
): Promise<TestClient> {
  const created = await createClientService(pool, {
    name: opts.name ?? 'Test Platform',
    redirectUris: opts.redirectUris ?? ['https://platform.example.com/oauth/callback'],
    ...(opts.scopes ? { scopes: opts.scopes } : {}),
  });
  return {
    id: created.client.id,
    client_id: created.client_id,
    client_secret: created.client_secret,
    name: created.client.name,
    redirect_uris: created.redirect_uris,
    scopes: created.scopes,
    client: created.client,
  };
}

export interface IssuedTokens extends TokenResponse {
  grant_id: string;
}

/** A grant plus an access/refresh pair, as if the user had approved the client on the consent page. */
export async function issueTokens(
  pool: Pool,
  input: {
    client: Pick<TestClient, 'id'>;
    userId: string;
    organizationId: string;
    scopes?: string[];
    accessTokenTtl?: number;
    refreshTokenTtl?: number;
  },
): Promise<IssuedTokens> {
  const scopes = input.scopes ?? ['calls:read'];
  return withTransaction(pool, async (client) => {
    const grant = await createGrant(client, {
      clientUuid: input.client.id,
      userId: input.userId,
      organizationId: input.organizationId,
      scopes,
    });
    const tokens = await issueTokenPair(
      client,
      { accessTokenTtl: input.accessTokenTtl ?? 3600, refreshTokenTtl: input.refreshTokenTtl ?? 5_184_000 },
      { grantId: grant.id, accessScopes: scopes, refreshScopes: scopes },
    );
    return { ...tokens, grant_id: grant.id };
  });
}

/** The three headers of interface §5.1. */
export function platformHeaders(tokens: { access_token: string }, client: { client_id: string; client_secret: string }): Record<string, string> {
  return {
    authorization: `Bearer ${tokens.access_token}`,
    'x-client-id': client.client_id,
    'x-client-secret': client.client_secret,
  };
}
