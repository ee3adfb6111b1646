// An MCP assistant as the official SDK builds one: `Client` over its
// Streamable HTTP transport with an in-memory OAuthClientProvider. The
// provider's "browser" is the test's UserAgent: the authorization URL the SDK
// opens is walked through the real login and consent pages.
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { auth, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { PASSWORD } from './fixtures.ts';
import { authorize, UserAgent } from './user-agent.ts';

/** A native app's loopback redirect: never dialled (the test reads the code from the consent page's redirect). */
export const ASSISTANT_REDIRECT = 'http://127.0.0.1:53682/callback';

export class TestProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  savedTokens: OAuthTokens | undefined;
  verifier = '';
  /** The WWW-Authenticate of the last 403 from /mcp. */
  lastForbidden: string | undefined;
  /** The authorization URLs the SDK asked the user to open, oldest first. */
  readonly authorizationUrls: URL[] = [];

  readonly clientMetadataUrl: string | undefined;
  constructor(clientMetadataUrl?: string) {
    this.clientMetadataUrl = clientMetadataUrl;
  }

  get redirectUrl() {
    return ASSISTANT_REDIRECT;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test Assistant',
      redirect_uris: [ASSISTANT_REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.savedTokens;
  }
  saveTokens(tokens: OAuthTokens) {
    this.savedTokens = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrls.push(url);
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** The transport, its fetch noting the last 403's challenge on the provider. */
export function transportFor(baseUrl: string, provider: TestProvider): StreamableHTTPClientTransport {
  const noting: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (response.status === 403) provider.lastForbidden = response.headers.get('www-authenticate') ?? undefined;
    return response;
  };
  return new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { authProvider: provider, fetch: noting });
}

/** A connected client with the provider's tokens (no sign-in: they must be valid). */
export async function connected(baseUrl: string, provider: TestProvider): Promise<Client> {
  const client = new Client({ name: 'switchboard-test-assistant', version: '1.0.0' });
  await client.connect(transportFor(baseUrl, provider));
  return client;
}

/**
 * The user opens the URL the SDK asked for, signs in if needed and allows;
 * the code goes back to the SDK (finishAuth), which exchanges it.
 */
export async function consentToLatest(
  baseUrl: string,
  provider: TestProvider,
  transport: StreamableHTTPClientTransport,
  agent: UserAgent,
  email: string,
): Promise<URL> {
  const url = provider.authorizationUrls.at(-1);
  assert.ok(url, 'the SDK asked the user to open an authorization URL');
  const location = new URL(await authorize(agent, url.toString(), { email, password: PASSWORD }));
  assert.equal(location.origin + location.pathname, ASSISTANT_REDIRECT);
  assert.equal(location.searchParams.get('iss'), baseUrl);
  const code = location.searchParams.get('code');
  assert.ok(code, `the consent page redirected with a code: ${location}`);
  await transport.finishAuth(code);
  return url;
}

/** From nothing: the 401 on connecting, discovery, registration, sign-in and consent; then a connected client. */
export async function signIn(
  baseUrl: string,
  provider: TestProvider,
  agent: UserAgent,
  email: string,
): Promise<{ client: Client; url: URL }> {
  const transport = transportFor(baseUrl, provider);
  const first = new Client({ name: 'switchboard-test-assistant', version: '1.0.0' });
  await assert.rejects(
    first.connect(transport),
    (error: Error) => error.name === 'UnauthorizedError' || /Unauthorized/.test(error.message),
  );
  const url = await consentToLatest(baseUrl, provider, transport, agent, email);
  return { client: await connected(baseUrl, provider), url };
}

/**
 * MCP's step-up: a tool the token's scopes do not cover answers 403
 * insufficient_scope with the scope to ask for. The SDK first refreshes (the
 * same scope, so the retry is refused again); the assistant then clears its
 * tokens and asks the user for the larger scope, by the SDK's own auth().
 */
export async function stepUp(
  baseUrl: string,
  provider: TestProvider,
  client: Client,
  agent: UserAgent,
  email: string,
  call: { name: string; arguments: Record<string, unknown> },
): Promise<{ scope: string; url: URL }> {
  await assert.rejects(client.callTool(call), /403/);
  const challenge = provider.lastForbidden;
  assert.ok(challenge, 'the 403 carried a WWW-Authenticate challenge');
  assert.match(challenge, /^Bearer error="insufficient_scope", scope="[^"]+"/);
  const scope = /scope="([^"]*)"/.exec(challenge)![1]!;
  provider.savedTokens = undefined;
  const serverUrl = new URL(`${baseUrl}/mcp`);
  assert.equal(await auth(provider, { serverUrl, scope }), 'REDIRECT');
  const url = provider.authorizationUrls.at(-1)!;
  const location = new URL(await authorize(agent, url.toString(), { email, password: PASSWORD }));
  assert.equal(await auth(provider, { serverUrl, authorizationCode: location.searchParams.get('code')! }), 'AUTHORIZED');
  return { scope, url };
}

export { UserAgent };
