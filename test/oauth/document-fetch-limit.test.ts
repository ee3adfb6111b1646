// Client ID Metadata Document fetches are an outbound request any stranger can
// cause, so /oauth/authorize allows 20 of them a minute per client address
// (docs/interface.md §10.7). The 21st from one address is refused without a
// fetch; another address keeps its own budget; a cached document needs none.
// Two real addresses: the server listens on 127.0.0.1, and the client binds
// its end of the connection to 127.0.0.1 or 127.0.0.2 (both loopback on Linux).
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { startHttpsTarget, type HttpsTarget } from '../helpers/https-target.ts';
import { authorizationUrl, LOOPBACK_REDIRECT } from '../helpers/mcp-token.ts';

const FETCHES_PER_MINUTE = 20;

/** GET `url` from the local address `from`; no redirects followed. */
function getFrom(from: string, url: string): Promise<{ status: number; body: string; location?: string; retryAfter?: string }> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { localAddress: from, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode!,
          body,
          location: response.headers.location,
          retryAfter: response.headers['retry-after'],
        }),
      );
    });
    request.on('error', reject);
  });
}

describe('metadata document fetches are rate-limited per address', () => {
  let t: TestApp;
  let documents: HttpsTarget;

  before(async () => {
    t = await startTestApp({ listen: true, env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    // Each document but /cached.json says no-cache, so each authorization fetches it again.
    documents = await startHttpsTarget((request) => ({
      status: 200,
      headers: { 'content-type': 'application/json', 'cache-control': request.url === '/cached.json' ? 'max-age=3600' : 'no-cache' },
      body: JSON.stringify({
        client_id: `${documents.url}${request.url}`,
        client_name: 'Limited Doc',
        redirect_uris: [LOOPBACK_REDIRECT],
        token_endpoint_auth_method: 'none',
      }),
    }));
  });
  after(async () => {
    await documents.close();
    await t.close();
  });

  test('the 21st fetch from one address within the minute is a 429 temporarily_unavailable page; another address is not affected', async () => {
    const cached = authorizationUrl(t.url, `${documents.url}/cached.json`);
    assert.equal((await getFrom('127.0.0.1', cached)).status, 302);
    const url = authorizationUrl(t.url, `${documents.url}/assistant.json`);
    for (let i = 1; i < FETCHES_PER_MINUTE; i++) {
      const answer = await getFrom('127.0.0.1', url);
      // Valid, nobody signed in: on to the login page.
      assert.equal(answer.status, 302, `authorization ${i + 1}: ${answer.body}`);
      assert.match(answer.location ?? '', /^\/login/);
    }
    assert.equal(documents.requests.length, FETCHES_PER_MINUTE);

    const refused = await getFrom('127.0.0.1', url);
    assert.equal(refused.status, 429);
    assert.match(refused.body, /temporarily_unavailable/);
    assert.match(refused.body, /too many client metadata documents fetched for this address/);
    const retryAfter = Number(refused.retryAfter);
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${refused.retryAfter}`);
    assert.equal(documents.requests.length, FETCHES_PER_MINUTE, 'the refused authorization fetched nothing');

    // A cached document costs no fetch, so it still works from the exhausted address.
    assert.equal((await getFrom('127.0.0.1', cached)).status, 302);
    assert.equal(documents.requests.length, FETCHES_PER_MINUTE);

    const elsewhere = await getFrom('127.0.0.2', url);
    assert.equal(elsewhere.status, 302, elsewhere.body);
    assert.equal(documents.requests.length, FETCHES_PER_MINUTE + 1);
  });
});
