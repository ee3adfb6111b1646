// An organization connected to an automation platform the way an operator and
// a platform do it with real processes: the organization, its owner and the
// OAuth client made with the `switchboard` command line (any release's), the
// code and tokens obtained over HTTP from a running server. For tests that
// follow docs/operations.md (upgrade, backup, restore).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { BIN, cliJson } from './cli.ts';
import { PASSWORD } from './fixtures.ts';
import { obtainCode } from './oauth.ts';

const REDIRECT_URI = 'https://platform.example/callback';

export interface HttpPlatform {
  organizationId: string;
  client: { client_id: string; client_secret: string };
  tokens: { access_token: string; refresh_token: string };
  /** The three platform headers (docs/interface.md §5.1). */
  headers: Record<string, string>;
}

function basic(client: HttpPlatform['client']): string {
  return `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`;
}

/** POST /oauth/token with the client's credentials; the answer, asserted 200. */
export async function tokenGrant(baseUrl: string, client: HttpPlatform['client'], form: Record<string, string>) {
  const answer = await fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { authorization: basic(client), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
  });
  assert.equal(answer.status, 200, await answer.clone().text());
  return (await answer.json()) as HttpPlatform['tokens'];
}

/** POST /oauth/token with grant_type=refresh_token and the client's credentials in the form; the raw answer, whatever its status. */
export function refreshOverHttp(baseUrl: string, client: HttpPlatform['client'], refreshToken: string): Promise<Response> {
  return fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: client.client_id,
      client_secret: client.client_secret,
    }),
  });
}

export async function connectOverHttp(baseUrl: string, env: NodeJS.ProcessEnv, bin = BIN): Promise<HttpPlatform> {
  const org = await cliJson<{ id: string }>(['org', 'create', '--name', `Org ${randomBytes(3).toString('hex')}`], env, bin);
  const email = `owner-${randomBytes(3).toString('hex')}@example.com`;
  await cliJson(['user', 'create', '--email', email, '--password', PASSWORD, '--org', org.id, '--role', 'owner'], env, bin);
  const client = await cliJson<{ client_id: string; client_secret: string; redirect_uris: string[] }>(
    ['client', 'create', '--name', 'Platform', '--redirect-uri', REDIRECT_URI],
    env,
    bin,
  );
  const { code, verifier } = await obtainCode(baseUrl, { client, member: { email }, params: { scope: 'calls:read calls:write' } });
  const tokens = await tokenGrant(baseUrl, client, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT_URI,
    code_verifier: verifier!,
  });
  const headers = {
    authorization: `Bearer ${tokens.access_token}`,
    'x-client-id': client.client_id,
    'x-client-secret': client.client_secret,
  };
  return { organizationId: org.id, client, tokens, headers };
}

/** POST /webhooks/subscribe with a secret (so every delivery carries it); asserted 201. */
export async function subscribeOverHttp(baseUrl: string, platform: HttpPlatform, hookUrl: string, secret: string): Promise<void> {
  const answer = await fetch(`${baseUrl}/webhooks/subscribe`, {
    method: 'POST',
    headers: { ...platform.headers, 'content-type': 'application/json' },
    body: JSON.stringify({ hookUrl, secret }),
  });
  assert.equal(answer.status, 201, await answer.clone().text());
}

/** `switchboard call complete` for the platform's organization; the call's id. */
export async function completeCallByCli(platform: HttpPlatform, summary: string, env: NodeJS.ProcessEnv, bin = BIN): Promise<string> {
  const call = await cliJson<{ id: string }>(
    ['call', 'complete', '--org', platform.organizationId, '--summary', summary, '--duration', '60'],
    env,
    bin,
  );
  return call.id;
}

/** The ids of the calls whose call.completed bodies a target received, in order. */
export function deliveredCallIds(requests: { body: string }[]): string[] {
  return requests.map((request) => (JSON.parse(request.body) as { id: string }).id);
}
