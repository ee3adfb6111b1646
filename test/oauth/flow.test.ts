import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as oauth from 'oauth4webapi';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember, PASSWORD } from '../helpers/fixtures.ts';
import { createClient, type TestClient } from '../helpers/oauth.ts';
import { authorize, UserAgent } from '../helpers/user-agent.ts';

// The whole Authorization Code flow as a strict third-party client sees it:
// oauth4webapi over real HTTP validates discovery, the authorization response
// (state, iss), the token responses and userinfo.
describe('OAuth 2.0 flow with oauth4webapi as the client', () => {
  let t: TestApp;
  let client: TestClient;
  const redirectUri = 'https://platform.example/oauth/callback';
  const insecure = { [oauth.allowInsecureRequests]: true };

  before(async () => {
    t = await startTestApp({ listen: true });
    client = await createClient(t.db.pool, {
      name: 'Strict Platform',
      redirectUris: [redirectUri],
      scopes: ['calls:read', 'contacts:read'],
    });
  });
  after(() => t.close());

  async function discover() {
    const issuer = new URL(t.url);
    const response = await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure });
    return oauth.processDiscoveryResponse(issuer, response);
  }

  for (const [method, clientAuth] of [
    ['client_secret_post', () => oauth.ClientSecretPost(client.client_secret)],
    ['client_secret_basic', () => oauth.ClientSecretBasic(client.client_secret)],
  ] as const) {
    test(`discovery, authorization with PKCE, code exchange, userinfo and refresh (${method})`, async () => {
      const as = await discover();
      assert.equal(as.issuer, t.url);
      assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
      assert.equal(as.authorization_response_iss_parameter_supported, true);

      const member = await createMember(t.db.pool);
      const oauthClient: oauth.Client = { client_id: client.client_id };
      const verifier = oauth.generateRandomCodeVerifier();
      const state = oauth.generateRandomState();
      const url = new URL(as.authorization_endpoint!);
      url.search = new URLSearchParams({
        response_type: 'code',
        client_id: client.client_id,
        redirect_uri: redirectUri,
        scope: 'calls:read contacts:read',
        state,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      }).toString();

      const agent = new UserAgent(t.url);
      const location = await authorize(agent, url.toString(), { email: member.email, password: PASSWORD });
      const callback = new URL(location);
      assert.equal(`${callback.origin}${callback.pathname}`, redirectUri);
      assert.equal(callback.searchParams.get('iss'), t.url);
      assert.equal(callback.searchParams.get('state'), state);

      const params = oauth.validateAuthResponse(as, oauthClient, callback, state);
      const tokenResponse = await oauth.authorizationCodeGrantRequest(
        as,
        oauthClient,
        clientAuth(),
        params,
        redirectUri,
        verifier,
        insecure,
      );
      assert.equal(tokenResponse.headers.get('cache-control'), 'no-store');
      const tokens = await oauth.processAuthorizationCodeResponse(as, oauthClient, tokenResponse);
      assert.equal(tokens.token_type, 'bearer');
      assert.equal(tokens.expires_in, t.config.accessTokenTtl);
      assert.equal(tokens.scope, 'calls:read contacts:read');
      assert.ok(tokens.refresh_token);

      const userinfoResponse = await oauth.userInfoRequest(as, oauthClient, tokens.access_token, insecure);
      const userinfo = await oauth.processUserInfoResponse(as, oauthClient, member.user.id, userinfoResponse);
      assert.deepEqual(userinfo, {
        sub: member.user.id,
        email: member.email,
        name: member.email,
        organization: { id: member.org.id, name: member.org.name },
      });

      const refreshResponse = await oauth.refreshTokenGrantRequest(as, oauthClient, clientAuth(), tokens.refresh_token!, insecure);
      const refreshed = await oauth.processRefreshTokenResponse(as, oauthClient, refreshResponse);
      assert.notEqual(refreshed.access_token, tokens.access_token);
      assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
      assert.equal(refreshed.scope, 'calls:read contacts:read');
      const again = await oauth.processUserInfoResponse(
        as,
        oauthClient,
        member.user.id,
        await oauth.userInfoRequest(as, oauthClient, refreshed.access_token, insecure),
      );
      assert.equal(again.email, member.email);

      const revoked = await oauth.revocationRequest(as, oauthClient, clientAuth(), refreshed.refresh_token!, insecure);
      await oauth.processRevocationResponse(revoked);
      const afterRevocation = await oauth.userInfoRequest(as, oauthClient, refreshed.access_token, insecure);
      assert.equal(afterRevocation.status, 401);
      assert.match(afterRevocation.headers.get('www-authenticate') ?? '', /^Bearer realm="switchboard", error="invalid_token"/);
    });
  }

  test('a tampered iss is caught by the client (the server sends its own)', async () => {
    const as = await discover();
    const member = await createMember(t.db.pool);
    const state = oauth.generateRandomState();
    const url = `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: client.client_id, state })}`;
    const location = new URL(await authorize(new UserAgent(t.url), url, { email: member.email, password: PASSWORD }));
    assert.equal(location.searchParams.get('iss'), t.url);
    location.searchParams.set('iss', 'https://attacker.example');
    assert.throws(() => oauth.validateAuthResponse(as, { client_id: client.client_id }, location, state), /iss/);
  });
});
