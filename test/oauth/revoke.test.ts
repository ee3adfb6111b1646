import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember } from '../helpers/fixtures.ts';
import { createClient, issueTokens, tokenRequest, type TestClient } from '../helpers/oauth.ts';

// POST /oauth/revoke (RFC 7009).
describe('POST /oauth/revoke', () => {
  let t: TestApp;
  let client: TestClient;
  let other: TestClient;
  before(async () => {
    t = await startTestApp();
    client = await createClient(t.db.pool);
    other = await createClient(t.db.pool, { name: 'Other' });
  });
  after(() => t.close());

  const creds = (c: TestClient = client) => ({ client_id: c.client_id, client_secret: c.client_secret });
  const revoke = (form: Record<string, string>) => tokenRequest(t.app, form, { path: '/oauth/revoke' });
  const userinfo = (token: string) => t.app.inject({ url: '/oauth/userinfo', headers: { authorization: `Bearer ${token}` } });
  const refresh = (token: string) => tokenRequest(t.app, { grant_type: 'refresh_token', refresh_token: token, ...creds() });

  async function tokens() {
    const member = await createMember(t.db.pool);
    return issueTokens(t.db.pool, { client, userId: member.user.id, organizationId: member.org.id });
  }

  test('an unknown token: 200 (RFC 7009 §2.2)', async () => {
    const res = await revoke({ token: 'sba_never_issued', ...creds() });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '');
  });

  test('client authentication is required', async () => {
    const issued = await tokens();
    const res = await revoke({ token: issued.access_token });
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().error, 'invalid_client');
    assert.ok(res.headers['www-authenticate']);
    const wrong = await revoke({ token: issued.access_token, client_id: client.client_id, client_secret: 'wrong' });
    assert.equal(wrong.statusCode, 401);
    assert.equal((await userinfo(issued.access_token)).statusCode, 200);
  });

  test('revoking an access token ends that token only', async () => {
    const issued = await tokens();
    assert.equal((await revoke({ token: issued.access_token, token_type_hint: 'access_token', ...creds() })).statusCode, 200);
    assert.equal((await userinfo(issued.access_token)).statusCode, 401);
    assert.equal((await refresh(issued.refresh_token)).statusCode, 200);
  });

  test('revoking a refresh token ends the whole grant', async () => {
    const issued = await tokens();
    assert.equal((await revoke({ token: issued.refresh_token, ...creds() })).statusCode, 200);
    assert.equal((await userinfo(issued.access_token)).statusCode, 401);
    assert.equal((await refresh(issued.refresh_token)).json().error, 'invalid_grant');
  });

  test('a token of another client is refused and stays valid', async () => {
    const issued = await tokens();
    const res = await revoke({ token: issued.access_token, ...creds(other) });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error, 'invalid_request');
    assert.equal((await userinfo(issued.access_token)).statusCode, 200);
  });

  test('a missing token parameter: invalid_request', async () => {
    const res = await revoke({ ...creds() });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error, 'invalid_request');
  });
});
