// The official MCP SDK's client (Client, its Streamable HTTP transport and an
// OAuthClientProvider) against a running server, end to end: once registering
// by a Client ID Metadata Document served over HTTPS, once by RFC 7591
// dynamic registration (docs/mcp.md).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { startHttpsTarget, type HttpsTarget } from '../helpers/https-target.ts';
import { runAssistant, TOOL_NAMES } from '../helpers/mcp-assistant.ts';
import { ASSISTANT_REDIRECT } from '../helpers/mcp-client.ts';

describe('an MCP assistant on the official SDK', () => {
  let t: TestApp;
  let documents: HttpsTarget;

  before(async () => {
    t = await startTestApp({ listen: true, env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    documents = await startHttpsTarget((request) => ({
      status: 200,
      headers: { 'content-type': 'application/json', 'cache-control': 'max-age=600' },
      body: JSON.stringify({
        client_id: `${documents.url}${request.url}`,
        client_name: 'Doc Assistant',
        redirect_uris: [ASSISTANT_REDIRECT],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      }),
    }));
  });
  after(async () => {
    await documents.close();
    await t.close();
  });

  async function grantsOf(organizationId: string) {
    const { rows } = await t.db.pool.query<{ resource: string | null; kind: string; scopes: string[] }>(
      `SELECT g.resource, c.kind, g.scopes FROM oauth_grants g JOIN oauth_clients c ON c.id = g.client_id
        WHERE g.organization_id = $1 ORDER BY g.created_at`,
      [organizationId],
    );
    return rows;
  }

  test('registering by a client metadata document served over HTTPS', async () => {
    const documentUrl = `${documents.url}/assistant.json`;
    const run = await runAssistant(t.url, t.db.pool, { documentUrl });
    assert.deepEqual([...new Set(run.called)].sort(), [...TOOL_NAMES].sort());
    // Fetched once: every later authorization read the cached row (max-age=600).
    assert.equal(documents.requests.filter((r) => r.url === '/assistant.json').length, 1);
    const grants = await grantsOf(run.organizationId);
    assert.ok(grants.length >= 3);
    for (const grant of grants) assert.deepEqual([grant.resource, grant.kind], [`${t.url}/mcp`, 'metadata_document']);
    const audit = await t.db.pool.query<{ details: { client_kind: string } }>(
      "SELECT details FROM audit_events WHERE organization_id = $1 AND type = 'grant.created'",
      [run.organizationId],
    );
    assert.ok(audit.rows.length >= 3 && audit.rows.every((r) => r.details.client_kind === 'metadata_document'));
  });

  test('registering by RFC 7591 dynamic registration', async () => {
    const run = await runAssistant(t.url, t.db.pool);
    assert.deepEqual([...new Set(run.called)].sort(), [...TOOL_NAMES].sort());
    const grants = await grantsOf(run.organizationId);
    for (const grant of grants) assert.deepEqual([grant.resource, grant.kind], [`${t.url}/mcp`, 'registered']);
    assert.deepEqual(grants.at(-1)!.scopes, ['calls:read', 'locations:read', 'locations:write']);
  });
});
