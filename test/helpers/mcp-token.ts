// A public client's token bound to /mcp, by plain HTTP: RFC 7591
// registration, the real login and consent pages with PKCE, the token
// endpoint without a secret. For the refusal tests, which need a token fast.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { PASSWORD } from './fixtures.ts';
import { authorize, UserAgent } from './user-agent.ts';

export const LOOPBACK_REDIRECT = 'http://127.0.0.1:40123/callback';

export interface PublicClientToken {
  clientId: string;
  access_token: string;
  refresh_token: string;
  scope: string;
}

export async function registerPublicClient(baseUrl: string, metadata: Record<string, unknown> = {}): Promise<Response> {
  return fetch(`${baseUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Refusal Assistant',
      redirect_uris: [LOOPBACK_REDIRECT],
      token_endpoint_auth_method: 'none',
      ...metadata,
    }),
  });
}

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function authorizationUrl(
  baseUrl: string,
  clientId: string,
  extra: Record<string, string> = {},
  challenge = pkce().challenge,
): string {
  return `${baseUrl}/oauth/authorize?${new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: LOOPBACK_REDIRECT,
    scope: 'calls:read',
    state: 'st',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...extra,
  })}`;
}

export async function tokenRequest(baseUrl: string, form: Record<string, string>): Promise<Response> {
  return fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
}

export async function publicClientToken(
  baseUrl: string,
  email: string,
  options: { scope?: string; clientId?: string; agent?: UserAgent } = {},
): Promise<PublicClientToken> {
  const clientId = options.clientId ?? ((await (await registerPublicClient(baseUrl)).json()) as { client_id: string }).client_id;
  const { verifier, challenge } = pkce();
  const url = authorizationUrl(baseUrl, clientId, { scope: options.scope ?? 'calls:read' }, challenge);
  const location = new URL(await authorize(options.agent ?? new UserAgent(baseUrl), url, { email, password: PASSWORD }));
  const code = location.searchParams.get('code');
  assert.ok(code, `consent redirected with a code: ${location}`);
  const response = await tokenRequest(baseUrl, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: LOOPBACK_REDIRECT,
    client_id: clientId,
    code_verifier: verifier,
  });
  assert.equal(response.status, 200, await response.clone().text());
  return { clientId, ...((await response.json()) as Omit<PublicClientToken, 'clientId'>) };
}

/** One JSON-RPC request to /mcp. */
export function mcpPost(baseUrl: string, token: string | undefined, body: unknown): Promise<Response> {
  return fetch(`${baseUrl}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export function toolCall(name: string, args: Record<string, unknown> = {}, id = 1) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } };
}
