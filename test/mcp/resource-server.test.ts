// /mcp as a protected resource (docs/mcp.md): RFC 9728 metadata, the 401 and
// 403 challenges, tokens of the right audience only, a revoked grant refused
// at once, tool failures as results, malformed requests as JSON-RPC errors.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember, PASSWORD, type Member } from '../helpers/fixtures.ts';
import { mcpPost, publicClientToken, toolCall, type PublicClientToken } from '../helpers/mcp-token.ts';
import { createClient, issueTokens, platformHeaders } from '../helpers/oauth.ts';
import { hiddenInputs, UserAgent } from '../helpers/user-agent.ts';

describe('/mcp, the protected resource', () => {
  let t: TestApp;
  let member: Member;
  let token: PublicClientToken;

  before(async () => {
    t = await startTestApp({ listen: true });
    member = await createMember(t.db.pool);
    token = await publicClientToken(t.url, member.email);
  });
  after(() => t.close());

  test('protected resource metadata (RFC 9728) at both well-known paths', async () => {
    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const response = await fetch(`${t.url}${path}`);
      assert.equal(response.status, 200);
      const metadata = (await response.json()) as Record<string, unknown>;
      assert.equal(metadata.resource, `${t.url}/mcp`);
      assert.deepEqual(metadata.authorization_servers, [t.url]);
      assert.deepEqual(metadata.bearer_methods_supported, ['header']);
      assert.deepEqual(metadata.scopes_supported, ['calls:read', 'locations:read', 'locations:write']);
    }
  });

  test('no token: 401 naming the metadata and calls:read', async () => {
    const response = await mcpPost(t.url, undefined, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.equal(response.status, 401);
    assert.equal(
      response.headers.get('www-authenticate'),
      `Bearer resource_metadata="${t.url}/.well-known/oauth-protected-resource/mcp", scope="calls:read"`,
    );
  });

  test('wrong audience, both ways: a platform token at /mcp, an /mcp token at the platform routes and userinfo', async () => {
    const platform = await createClient(t.db.pool);
    const platformTokens = await issueTokens(t.db.pool, { client: platform, userId: member.user.id, organizationId: member.org.id });
    const atMcp = await mcpPost(t.url, platformTokens.access_token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.equal(atMcp.status, 401);
    assert.match(atMcp.headers.get('www-authenticate')!, /^Bearer error="invalid_token", error_description="[^"]*platform API[^"]*"/);
    assert.match(atMcp.headers.get('www-authenticate')!, /resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/mcp"/);

    // Even with a platform client's own headers beside it, the /mcp token is not a platform token.
    const recent = await fetch(`${t.url}/calls/recent`, {
      headers: platformHeaders({ access_token: token.access_token }, platform),
    });
    assert.equal(recent.status, 401);
    assert.match(recent.headers.get('www-authenticate')!, /error="invalid_token"/);
    const userinfo = await fetch(`${t.url}/oauth/userinfo`, { headers: { authorization: `Bearer ${token.access_token}` } });
    assert.equal(userinfo.status, 401);
    // And the platform token still works where it belongs.
    const own = await fetch(`${t.url}/calls/recent`, { headers: platformHeaders(platformTokens, platform) });
    assert.equal(own.status, 200);
  });

  test('a tool the scopes do not cover: 403 insufficient_scope with the token’s scopes and the missing one; tools/list shows all', async () => {
    const list = await mcpPost(t.url, token.access_token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.equal(list.status, 200);
    assert.equal(((await list.json()) as { result: { tools: unknown[] } }).result.tools.length, 13);
    const refused = await mcpPost(t.url, token.access_token, toolCall('delete_location', { id: crypto.randomUUID() }));
    assert.equal(refused.status, 403);
    assert.match(refused.headers.get('www-authenticate')!, /^Bearer error="insufficient_scope", scope="calls:read locations:write"/);
  });

  test('expected tool failures are isError results; malformed requests are JSON-RPC errors; nothing is a 500', async () => {
    const answer = async (body: unknown) => {
      const response = await mcpPost(t.url, token.access_token, body);
      // biome-ignore lint/suspicious/noExplicitAny: JSON-RPC answers are read field by field.
      return { status: response.status, body: (await response.json()) as Record<string, any> };
    };
    const missing = await answer(toolCall('get_call', { id: '00000000-0000-4000-8000-000000000000' }));
    assert.equal(missing.status, 200);
    assert.equal(missing.body.result.isError, true);
    assert.match(missing.body.result.content[0].text, /does not exist/);
    const unknownArgument = await answer(toolCall('list_recent_calls', { limit: 5, colour: 'blue' }));
    assert.equal(unknownArgument.body.result.isError, true);
    assert.match(unknownArgument.body.result.content[0].text, /colour is not an allowed field/);
    const overLimit = await answer(toolCall('list_recent_calls', { limit: 1000 }));
    assert.equal(overLimit.body.result.isError, true);
    assert.match(overLimit.body.result.content[0].text, /limit/);
    const unknownTool = await answer(toolCall('drop_tables'));
    assert.equal(unknownTool.body.error.code, -32602);
    const notJson = await answer('{"jsonrpc": "2.0", ');
    assert.equal(notJson.status, 400);
    assert.equal(notJson.body.error.code, -32700);
    const notJsonRpc = await answer({ hello: 'world' });
    assert.equal(notJsonRpc.status, 400);
    assert.ok(notJsonRpc.body.error.code < 0);
    // Each tool call is counted by tool and outcome.
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    assert.match(metrics, /switchboard_mcp_tool_calls_total\{tool="get_call",outcome="error"\} 1/);
    assert.match(metrics, /switchboard_mcp_tool_calls_total\{tool="list_recent_calls",outcome="error"\} 2/);
  });

  test('revoking the app under Connected apps stops its /mcp access at once; grant.revoked says client_kind', async () => {
    const own = await publicClientToken(t.url, member.email);
    assert.equal((await mcpPost(t.url, own.access_token, toolCall('list_recent_calls'))).status, 200);
    const agent = new UserAgent(t.url);
    const login = await agent.get('/login');
    await agent.post('/login', { ...hiddenInputs(login.body, '/login'), email: member.email, password: PASSWORD });
    const page = await agent.get('/connected-apps');
    assert.match(page.body, /Refusal Assistant/);
    assert.match(page.body, /AI assistant \(MCP\), self-registered, not verified/);
    const fields = hiddenInputs(page.body.slice(page.body.indexOf(own.clientId) - 400), '/connected-apps/revoke');
    assert.equal(fields.client_id, own.clientId);
    assert.equal((await agent.post('/connected-apps/revoke', fields)).status, 303);
    const after = await mcpPost(t.url, own.access_token, toolCall('list_recent_calls'));
    assert.equal(after.status, 401);
    assert.match(after.headers.get('www-authenticate')!, /error="invalid_token"/);
    const { rows } = await t.db.pool.query<{ details: { client_kind: string } }>(
      "SELECT details FROM audit_events WHERE type = 'grant.revoked' AND subject_id = $1",
      [own.clientId],
    );
    assert.equal(rows[0]?.details.client_kind, 'registered');
  });

  test('GET and DELETE /mcp: 405, the server keeps no streams or sessions', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(`${t.url}/mcp`, { method, headers: { authorization: `Bearer ${token.access_token}` } });
      assert.equal(response.status, 405);
      assert.equal(response.headers.get('allow'), 'POST');
    }
  });
});

describe('MCP_ENABLED=false', () => {
  test('no /mcp and no protected resource metadata', async () => {
    const t = await startTestApp({ listen: true, env: { MCP_ENABLED: 'false' } });
    try {
      assert.equal((await mcpPost(t.url, 'x', { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status, 404);
      assert.equal((await fetch(`${t.url}/.well-known/oauth-protected-resource/mcp`)).status, 404);
    } finally {
      await t.close();
    }
  });
});
