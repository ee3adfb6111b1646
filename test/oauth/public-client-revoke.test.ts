// POST /oauth/revoke (RFC 7009) for a public client (token_endpoint_auth_method
// none, registered at /oauth/register): it sends its client_id alone, as at the
// token endpoint (docs/interface.md §10.7). Its revoked tokens stop working at
// /mcp at once; a platform client still needs its secret; neither kind can
// revoke another client's token. The app runs with process caches and their
// LISTEN connection, as `serve` does, so /mcp has the token cached when it is revoked.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { listenForInvalidations } from '../../src/cache/cache-listener.ts';
import { createProcessCaches } from '../../src/cache/process-caches.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createMember, type Member } from '../helpers/fixtures.ts';
import { mcpPost, publicClientToken, tokenRequest } from '../helpers/mcp-token.ts';
import { createClient, issueTokens } from '../helpers/oauth.ts';

const TOOLS_LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list' };

describe('/oauth/revoke for public clients', () => {
  let db: TestDatabase;
  let listener: { close(): Promise<void> };
  let t: TestApp;
  let member: Member;

  before(async () => {
    db = await createTestDatabase();
    const caches = createProcessCaches({ maxAgeMs: 60_000 });
    listener = await listenForInvalidations(db.url, caches, pino({ level: 'silent' }));
    t = await startTestApp({ listen: true, db, caches });
    member = await createMember(t.db.pool);
  });
  after(async () => {
    await t.close();
    await listener.close();
    await db.drop();
  });

  const revoke = (form: Record<string, string>) =>
    fetch(`${t.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
  const mcpStatus = async (token: string) => (await mcpPost(t.url, token, TOOLS_LIST)).status;
  const userinfoStatus = async (token: string) =>
    (await fetch(`${t.url}/oauth/userinfo`, { headers: { authorization: `Bearer ${token}` } })).status;
  const refresh = (clientId: string, refreshToken: string) =>
    tokenRequest(t.url, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });

  test('a public client revokes its access token with its client_id alone: 200, and /mcp refuses the token at once', async () => {
    const token = await publicClientToken(t.url, member.email);
    assert.equal(await mcpStatus(token.access_token), 200);
    const revoked = await revoke({ token: token.access_token, token_type_hint: 'access_token', client_id: token.clientId });
    assert.equal(revoked.status, 200, await revoked.clone().text());
    assert.equal(await revoked.text(), '');
    assert.equal(await mcpStatus(token.access_token), 401);
    // An access token alone: the grant's refresh token still works.
    assert.equal((await refresh(token.clientId, token.refresh_token)).status, 200);
  });

  test('a public client revokes its refresh token: 200, the grant ends, its access token stops at /mcp at once', async () => {
    const token = await publicClientToken(t.url, member.email);
    assert.equal(await mcpStatus(token.access_token), 200);
    const revoked = await revoke({ token: token.refresh_token, client_id: token.clientId });
    assert.equal(revoked.status, 200, await revoked.clone().text());
    assert.equal(await mcpStatus(token.access_token), 401);
    const refreshed = await refresh(token.clientId, token.refresh_token);
    assert.equal(refreshed.status, 400);
    assert.equal(((await refreshed.json()) as { error: string }).error, 'invalid_grant');
  });

  test('an unknown token from a public client: 200 (RFC 7009 §2.2); a public client sending a secret: invalid_client', async () => {
    const token = await publicClientToken(t.url, member.email);
    assert.equal((await revoke({ token: 'sba_never_issued', client_id: token.clientId })).status, 200);
    const withSecret = await revoke({ token: token.access_token, client_id: token.clientId, client_secret: 'guess' });
    assert.equal(withSecret.status, 401);
    assert.equal(((await withSecret.json()) as { error: string }).error, 'invalid_client');
    assert.equal(await mcpStatus(token.access_token), 200);
  });

  test('a platform (confidential) client still needs its secret', async () => {
    const platform = await createClient(t.db.pool);
    const issued = await issueTokens(t.db.pool, { client: platform, userId: member.user.id, organizationId: member.org.id });
    for (const token of [issued.access_token, issued.refresh_token]) {
      const refused = await revoke({ token, client_id: platform.client_id });
      assert.equal(refused.status, 401);
      assert.equal(((await refused.json()) as { error: string }).error, 'invalid_client');
      assert.ok(refused.headers.get('www-authenticate'));
    }
    assert.equal(await userinfoStatus(issued.access_token), 200);
    const revoked = await revoke({ token: issued.access_token, client_id: platform.client_id, client_secret: platform.client_secret });
    assert.equal(revoked.status, 200);
    assert.equal(await userinfoStatus(issued.access_token), 401);
  });

  test("a public client cannot revoke another client's token, public or platform; the token keeps working", async () => {
    const mine = await publicClientToken(t.url, member.email);
    const theirs = await publicClientToken(t.url, member.email);
    const platform = await createClient(t.db.pool);
    const platformTokens = await issueTokens(t.db.pool, { client: platform, userId: member.user.id, organizationId: member.org.id });
    for (const token of [theirs.access_token, theirs.refresh_token, platformTokens.access_token, platformTokens.refresh_token]) {
      const refused = await revoke({ token, client_id: mine.clientId });
      assert.equal(refused.status, 400);
      assert.equal(((await refused.json()) as { error: string }).error, 'invalid_request');
    }
    assert.equal(await mcpStatus(theirs.access_token), 200);
    assert.equal((await refresh(theirs.clientId, theirs.refresh_token)).status, 200);
    assert.equal(await userinfoStatus(platformTokens.access_token), 200);
  });
});
