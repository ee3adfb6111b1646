// OAuth clients and tokens made through the real services (the same code the
// CLI and the token endpoint run), for tests of platform endpoints.
import type { FastifyInstance } from 'fastify';
import { createHash, randomBytes } from 'node:crypto';
import type { Pool } from '../../src/db/pool.ts';
import { withTransaction } from '../../src/db/transaction.ts';
import { createClient as createClientService } from '../../src/oauth/clients.service.ts';
import type { OAuthClient } from '../../src/oauth/clients.queries.ts';
import { createGrant, issueTokenPair, type TokenResponse } from '../../src/oauth/tokens.service.ts';
import { PASSWORD } from './fixtures.ts';
import { authorize, UserAgent } from './user-agent.ts';

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
    refreshTokenMaxLifetime?: number;
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
      {
        accessTokenTtl: input.accessTokenTtl ?? 3600,
        refreshTokenTtl: input.refreshTokenTtl ?? 5_184_000,
        ...(input.refreshTokenMaxLifetime !== undefined ? { refreshTokenMaxLifetime: input.refreshTokenMaxLifetime } : {}),
      },
      { grantId: grant.id, accessScopes: scopes, refreshScopes: scopes },
    );
    const { refresh_token_id: _id, ...pair } = tokens;
    return { ...pair, grant_id: grant.id };
  });
}

/** The three headers of docs/interface.md §5.1. */
export function platformHeaders(
  tokens: { access_token: string },
  client: { client_id: string; client_secret: string },
): Record<string, string> {
  return {
    authorization: `Bearer ${tokens.access_token}`,
    'x-client-id': client.client_id,
    'x-client-secret': client.client_secret,
  };
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function authorizationPath(params: Record<string, string>): string {
  return `/oauth/authorize?${new URLSearchParams(params)}`;
}

/**
 * Signs a member in and approves the client over real HTTP, returning the
 * code (with its PKCE verifier when one was used) and the full callback URL.
 */
export async function obtainCode(
  baseUrl: string,
  input: {
    client: Pick<TestClient, 'client_id' | 'redirect_uris'>;
    member: { email: string };
    params?: Record<string, string>;
    pkce?: boolean;
    organizationId?: string;
  },
): Promise<{ code: string; verifier: string | undefined; callback: URL; agent: UserAgent }> {
  const pair = input.pkce === false ? undefined : pkcePair();
  const params: Record<string, string> = {
    response_type: 'code',
    client_id: input.client.client_id,
    redirect_uri: input.client.redirect_uris[0]!,
    state: randomBytes(8).toString('hex'),
    ...(pair ? { code_challenge: pair.challenge, code_challenge_method: 'S256' } : {}),
    ...input.params,
  };
  const agent = new UserAgent(baseUrl);
  const location = await authorize(agent, authorizationPath(params), {
    email: input.member.email,
    password: PASSWORD,
    ...(input.organizationId ? { organizationId: input.organizationId } : {}),
  });
  const callback = new URL(location);
  const code = callback.searchParams.get('code');
  if (!code) throw new Error(`no code in ${location}`);
  return { code, verifier: pair?.verifier, callback, agent };
}

/** POST /oauth/token (form-encoded, client_secret_post unless basic is given) through app.inject. */
export function tokenRequest(
  app: FastifyInstance,
  form: Record<string, string>,
  options: { basic?: { client_id: string; client_secret: string }; remoteAddress?: string; path?: string } = {},
) {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (options.basic) {
    headers.authorization = `Basic ${Buffer.from(`${options.basic.client_id}:${options.basic.client_secret}`).toString('base64')}`;
  }
  return app.inject({
    method: 'POST',
    url: options.path ?? '/oauth/token',
    headers,
    payload: new URLSearchParams(form).toString(),
    ...(options.remoteAddress ? { remoteAddress: options.remoteAddress } : {}),
  });
}
