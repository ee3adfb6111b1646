// Public clients (docs/interface.md §10): RFC 8707 resources, Client ID
// Metadata Documents, RFC 7591 registration, loopback redirects (RFC 8252
// §7.3), and each refusal the issue names.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember, PASSWORD, type Member } from '../helpers/fixtures.ts';
import { startHttpsTarget, type HttpsTarget, type TargetResponse } from '../helpers/https-target.ts';
import { authorizationUrl, LOOPBACK_REDIRECT, pkce, publicClientToken, registerPublicClient, tokenRequest } from '../helpers/mcp-token.ts';
import { createClient } from '../helpers/oauth.ts';
import { authorize, UserAgent } from '../helpers/user-agent.ts';

const json = (body: unknown, headers: Record<string, string> = {}): TargetResponse => ({
  status: 200,
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

describe('public clients', () => {
  let t: TestApp;
  let member: Member;
  let documents: HttpsTarget;
  let serve: (path: string) => TargetResponse;

  before(async () => {
    t = await startTestApp({ listen: true, env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    member = await createMember(t.db.pool);
    documents = await startHttpsTarget((request) => serve(request.url));
  });
  after(async () => {
    await documents.close();
    await t.close();
  });

  const documentFor = (path: string, extra: Record<string, unknown> = {}) => ({
    client_id: `${documents.url}${path}`,
    client_name: 'Doc Client',
    redirect_uris: [LOOPBACK_REDIRECT],
    token_endpoint_auth_method: 'none',
    ...extra,
  });

  async function errorPage(url: string): Promise<string> {
    const response = await fetch(url, { redirect: 'manual' });
    assert.equal(response.status, 400, `expected an error page for ${url}`);
    return response.text();
  }

  test('metadata advertises public clients', async () => {
    const metadata = (await (await fetch(`${t.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    assert.equal(metadata.client_id_metadata_document_supported, true);
    assert.equal(metadata.registration_endpoint, `${t.url}/oauth/register`);
    assert.ok((metadata.token_endpoint_auth_methods_supported as string[]).includes('none'));
  });

  test('an unknown resource is invalid_target, at the authorization and the token endpoint; refresh keeps the resource', async () => {
    const registered = (await (await registerPublicClient(t.url)).json()) as { client_id: string };
    const page = await fetch(authorizationUrl(t.url, registered.client_id, { resource: 'https://elsewhere.example/api' }), {
      redirect: 'manual',
    });
    assert.equal(page.status, 302);
    assert.equal(new URL(page.headers.get('location')!).searchParams.get('error'), 'invalid_target');
    const platform = await createClient(t.db.pool);
    const platformPage = await fetch(
      `${t.url}/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: platform.client_id, resource: `${t.url}/mcp` })}`,
      { redirect: 'manual' },
    );
    assert.equal(new URL(platformPage.headers.get('location')!).searchParams.get('error'), 'invalid_target');

    const token = await publicClientToken(t.url, member.email, { clientId: registered.client_id });
    const wrong = await tokenRequest(t.url, {
      grant_type: 'refresh_token',
      refresh_token: token.refresh_token,
      client_id: registered.client_id,
      resource: 'https://elsewhere.example/api',
    });
    assert.equal(wrong.status, 400);
    assert.equal(((await wrong.json()) as { error: string }).error, 'invalid_target');
    const refreshed = await tokenRequest(t.url, {
      grant_type: 'refresh_token',
      refresh_token: token.refresh_token,
      client_id: registered.client_id,
      resource: `${t.url}/mcp`,
    });
    assert.equal(refreshed.status, 200);
    const { access_token } = (await refreshed.json()) as { access_token: string };
    const tools = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(tools.status, 200);
  });

  test('public clients must use PKCE; a secret is not a public client’s authentication', async () => {
    const registered = (await (await registerPublicClient(t.url)).json()) as { client_id: string };
    const url = new URL(authorizationUrl(t.url, registered.client_id));
    url.searchParams.delete('code_challenge');
    url.searchParams.delete('code_challenge_method');
    const page = await fetch(url, { redirect: 'manual' });
    assert.match(new URL(page.headers.get('location')!).searchParams.get('error_description')!, /public clients must use PKCE/);
    const withSecret = await tokenRequest(t.url, {
      grant_type: 'refresh_token',
      refresh_token: 'x',
      client_id: registered.client_id,
      client_secret: 'guess',
    });
    assert.equal(withSecret.status, 401);
  });

  test('loopback redirects match whatever their port (RFC 8252 §7.3); an unregistered redirect is an error page', async () => {
    const registered = (await (await registerPublicClient(t.url)).json()) as { client_id: string };
    const otherPort = LOOPBACK_REDIRECT.replace('40123', '51999');
    const location = await authorize(new UserAgent(t.url), authorizationUrl(t.url, registered.client_id, { redirect_uri: otherPort }), {
      email: member.email,
      password: PASSWORD,
    });
    assert.ok(location.startsWith(`${otherPort}?code=`));
    for (const redirect of ['http://127.0.0.1:40123/elsewhere', 'https://attacker.example/callback']) {
      assert.match(
        await errorPage(authorizationUrl(t.url, registered.client_id, { redirect_uri: redirect })),
        /does not match a registered redirect URI/,
      );
    }
  });

  test('the consent page says who is asking: name, host, not verified, and where the browser goes', async () => {
    serve = (path) => json(documentFor(path, { client_name: 'Consent Doc' }));
    const agent = new UserAgent(t.url);
    const login = await agent.get(`/login`);
    const { hiddenInputs } = await import('../helpers/user-agent.ts');
    await agent.post('/login', { ...hiddenInputs(login.body, '/login'), email: member.email, password: PASSWORD });
    const page = await agent.get(authorizationUrl(t.url, `${documents.url}/consent.json`));
    assert.equal(page.status, 200);
    assert.match(page.body, /Consent Doc/);
    assert.match(page.body, new RegExp(`From ${new URL(documents.url).host}`));
    assert.match(page.body, /not verified/);
    assert.match(page.body, /sent back to http:\/\/127\.0\.0\.1:40123/);
    const registered = (await (await registerPublicClient(t.url, { client_name: 'Local App' })).json()) as { client_id: string };
    const local = await agent.get(authorizationUrl(t.url, registered.client_id));
    assert.match(local.body, /From an app on this computer/);
  });

  test('metadata documents refused: another client_id, oversized, not JSON, a redirect, a secret-using client', async () => {
    const cases: [string, TargetResponse, RegExp][] = [
      ['/other.json', json(documentFor('/someone-else.json')), /does not name itself as its client_id/],
      ['/big.json', json(documentFor('/big.json', { padding: 'x'.repeat(6000) })), /larger than 5120 bytes/],
      ['/text.json', { status: 200, body: 'hello' }, /not JSON/],
      ['/moved.json', { status: 302, headers: { location: '/elsewhere.json' } }, /HTTP 302/],
      [
        '/secret.json',
        json(documentFor('/secret.json', { token_endpoint_auth_method: 'client_secret_basic' })),
        /token_endpoint_auth_method/,
      ],
      ['/http.json', json(documentFor('/http.json', { redirect_uris: ['http://attacker.example/cb'] })), /redirect_uris/],
    ];
    const byPath = new Map(cases.map(([path, response]) => [path, response]));
    serve = (path) => byPath.get(path) ?? { status: 404 };
    for (const [path, , message] of cases) {
      const body = await errorPage(authorizationUrl(t.url, `${documents.url}${path}`));
      assert.match(body, message, path);
    }
  });

  test('a document is cached in its row as its Cache-Control says, and fetched again once expired', async () => {
    let fetches = 0;
    serve = (path) => {
      fetches++;
      return json(documentFor(path), { 'cache-control': 'no-cache' });
    };
    const url = authorizationUrl(t.url, `${documents.url}/nocache.json`);
    await fetch(url, { redirect: 'manual' });
    await fetch(url, { redirect: 'manual' });
    assert.equal(fetches, 2);
    serve = (path) => {
      fetches++;
      return json(documentFor(path), { 'cache-control': 'max-age=3600' });
    };
    const cached = authorizationUrl(t.url, `${documents.url}/cached.json`);
    await fetch(cached, { redirect: 'manual' });
    await fetch(cached, { redirect: 'manual' });
    assert.equal(fetches, 3);
    const { rows } = await t.db.pool.query<{ seconds: number }>(
      'SELECT extract(epoch FROM metadata_expires_at - now())::int AS seconds FROM oauth_clients WHERE client_id = $1',
      [`${documents.url}/cached.json`],
    );
    assert.ok(rows[0]!.seconds > 3500 && rows[0]!.seconds <= 3600);
  });

  test('dynamic registration: unknown fields ignored, refusals in RFC 7591 form', async () => {
    const ok = await registerPublicClient(t.url, { software_id: 'ignored', logo_uri: 'https://x.example/logo.png' });
    assert.equal(ok.status, 201);
    const body = (await ok.json()) as Record<string, unknown>;
    assert.equal(body.token_endpoint_auth_method, 'none');
    assert.equal(body.client_secret, undefined);
    assert.equal(body.software_id, undefined);
    const badRedirect = await registerPublicClient(t.url, { redirect_uris: ['http://attacker.example/cb'] });
    assert.equal(badRedirect.status, 400);
    assert.equal(((await badRedirect.json()) as { error: string }).error, 'invalid_redirect_uri');
    const confidential = await registerPublicClient(t.url, { token_endpoint_auth_method: 'client_secret_basic' });
    assert.equal(((await confidential.json()) as { error: string }).error, 'invalid_client_metadata');
  });
});

describe('public clients: the switches and the address rules', () => {
  test('a private-address document URL is refused without WEBHOOK_ALLOW_PRIVATE_TARGETS', async () => {
    const t = await startTestApp({ listen: true, env: { WEBHOOK_ALLOWED_PORTS: '*' } });
    const documents = await startHttpsTarget(() => json({}));
    try {
      const response = await fetch(authorizationUrl(t.url, `${documents.url}/doc.json`, {}, pkce().challenge), { redirect: 'manual' });
      assert.equal(response.status, 400);
      assert.match(await response.text(), /not a public address/);
      assert.equal(documents.requests.length, 0);
    } finally {
      await documents.close();
      await t.close();
    }
  });

  test('OAUTH_CLIENT_METADATA_DOCUMENTS=false and OAUTH_DYNAMIC_REGISTRATION=false turn each kind off', async () => {
    const t = await startTestApp({
      listen: true,
      env: { OAUTH_CLIENT_METADATA_DOCUMENTS: 'false', OAUTH_DYNAMIC_REGISTRATION: 'false', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
    });
    const documents = await startHttpsTarget(() => json({}));
    try {
      const metadata = (await (await fetch(`${t.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
      assert.equal(metadata.client_id_metadata_document_supported, false);
      assert.equal(metadata.registration_endpoint, undefined);
      assert.equal((await registerPublicClient(t.url)).status, 404);
      const page = await fetch(authorizationUrl(t.url, `${documents.url}/doc.json`), { redirect: 'manual' });
      assert.match(await page.text(), /does not name a registered client/);
      assert.equal(documents.requests.length, 0);
    } finally {
      await documents.close();
      await t.close();
    }
  });

  test('registrations are rate-limited per address', async () => {
    const t = await startTestApp({ listen: true });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 21; i++) statuses.push((await registerPublicClient(t.url)).status);
      assert.deepEqual(statuses.slice(0, 20), Array(20).fill(201));
      assert.equal(statuses[20], 429);
    } finally {
      await t.close();
    }
  });
});
