// /mcp answers as the SDK's own stateless transport would
// (src/mcp/post-transport.ts): the same requests, sent to the running server
// and to the SDK's WebStandardStreamableHTTPServerTransport under the same
// Server and tools, get the same status, content type and body. And requests
// in flight together, from tokens of two organizations with different scopes,
// each get their own answer.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, LATEST_PROTOCOL_VERSION, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCall } from '../../src/calls/calls.service.ts';
import { callTool } from '../../src/mcp/call-tool.ts';
import { buildCatalogue } from '../../src/mcp/catalogue.ts';
import type { ToolContext } from '../../src/mcp/tools/tool.ts';
import { createMetrics } from '../../src/metrics/metrics.ts';
import { VERSION } from '../../src/version.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember } from '../helpers/fixtures.ts';
import { publicClientToken, toolCall, type PublicClientToken } from '../helpers/mcp-token.ts';

const HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
};
const initialize = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'test', version: '1' } },
};

/** The same exchanges, each as headers and a body. */
const CASES: { name: string; headers?: Record<string, string>; body: unknown }[] = [
  { name: 'initialize', body: initialize },
  { name: 'initialize, an older revision', body: { ...initialize, params: { ...initialize.params, protocolVersion: '2025-03-26' } } },
  { name: 'initialize, an unknown revision', body: { ...initialize, params: { ...initialize.params, protocolVersion: '1999-01-01' } } },
  { name: 'tools/list', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } },
  { name: 'a string id', body: { jsonrpc: '2.0', id: 'abc', method: 'tools/list' } },
  { name: 'ping', body: { jsonrpc: '2.0', id: 2, method: 'ping' } },
  { name: 'a notification alone', body: { jsonrpc: '2.0', method: 'notifications/initialized' } },
  { name: 'an unknown method', body: { jsonrpc: '2.0', id: 3, method: 'resources/list' } },
  { name: 'an unknown tool', body: toolCall('drop_tables') },
  { name: 'invalid arguments', body: toolCall('get_call', { id: 'not-a-uuid' }) },
  { name: 'tools/call without a name', body: { jsonrpc: '2.0', id: 4, method: 'tools/call', params: {} } },
  {
    name: 'a batch',
    body: [
      { jsonrpc: '2.0', id: 5, method: 'tools/list' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 6, method: 'ping' },
    ],
  },
  { name: 'a batch with initialize', body: [initialize, { jsonrpc: '2.0', id: 7, method: 'ping' }] },
  { name: 'a batch too large', body: Array.from({ length: 101 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' })) },
  { name: 'not JSON-RPC', body: { hello: 'world' } },
  { name: 'an empty batch', body: [] },
  { name: 'accepts JSON only', headers: { accept: 'application/json' }, body: { jsonrpc: '2.0', id: 8, method: 'ping' } },
  { name: 'no accept', headers: { accept: '' }, body: { jsonrpc: '2.0', id: 9, method: 'ping' } },
  {
    name: 'content type with a charset',
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: { jsonrpc: '2.0', id: 10, method: 'ping' },
  },
  {
    name: 'an unsupported revision header',
    headers: { 'mcp-protocol-version': '1999-01-01' },
    body: { jsonrpc: '2.0', id: 11, method: 'ping' },
  },
  { name: 'an older revision header', headers: { 'mcp-protocol-version': '2025-03-26' }, body: { jsonrpc: '2.0', id: 12, method: 'ping' } },
  { name: 'initialize with a bad revision header', headers: { 'mcp-protocol-version': '1999-01-01' }, body: initialize },
];

/** The SDK's own stateless transport in JSON mode, under a Server set up as src/mcp/mcp-server.ts sets up its own. */
async function sdkAnswer(headers: Record<string, string>, body: unknown) {
  const catalogue = buildCatalogue();
  const server = new Server(
    { name: 'switchboard', title: 'Switchboard', version: VERSION },
    { capabilities: { tools: { listChanged: false } } },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => catalogue.list);
  server.setRequestHandler(CallToolRequestSchema, (call) => callTool(catalogue, createMetrics(), {} as ToolContext, call.params));
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  const response = await transport.handleRequest(new Request('http://localhost/mcp', { method: 'POST', headers }), { parsedBody: body });
  await server.close();
  return { status: response.status, type: response.headers.get('content-type'), body: await response.text() };
}

describe('/mcp, the transport', () => {
  let t: TestApp;
  let token: PublicClientToken;

  before(async () => {
    t = await startTestApp({ listen: true });
    token = await publicClientToken(t.url, (await createMember(t.db.pool)).email);
  });
  after(() => t.close());

  async function post(accessToken: string, body: unknown, headers: Record<string, string> = {}) {
    const response = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: { ...HEADERS, ...headers, authorization: `Bearer ${accessToken}` },
      body: JSON.stringify(body),
    });
    const type = response.headers.get('content-type');
    return { status: response.status, type: type?.split(';')[0], body: await response.text() };
  }

  for (const exchange of CASES) {
    test(`as the SDK's transport: ${exchange.name}`, async () => {
      const headers = { ...HEADERS, ...exchange.headers };
      const expected = await sdkAnswer(headers, exchange.body);
      const actual = await post(token.access_token, exchange.body, exchange.headers);
      assert.equal(actual.status, expected.status, actual.body);
      assert.equal(expected.status === 202 ? null : actual.type, expected.status === 202 ? null : expected.type);
      assert.deepEqual(actual.body === '' ? '' : JSON.parse(actual.body), expected.body === '' ? '' : JSON.parse(expected.body));
    });
  }

  test('requests in flight together, from two organizations with different scopes, each get their own answer', async () => {
    const leeds = await createMember(t.db.pool);
    const bristol = await createMember(t.db.pool);
    await createCall(t.db.pool, leeds.org.id, { summary: 'Leeds call', duration_seconds: 1 });
    await createCall(t.db.pool, bristol.org.id, { summary: 'Bristol call', duration_seconds: 1 });
    const readsCalls = await publicClientToken(t.url, leeds.email, { scope: 'calls:read' });
    const readsAll = await publicClientToken(t.url, bristol.email, { scope: 'calls:read locations:read' });
    const rounds = await Promise.all(
      Array.from({ length: 20 }, (_, i) => {
        const [who, name] = i % 2 === 0 ? [readsCalls, 'Leeds call'] : [readsAll, 'Bristol call'];
        return Promise.all([
          post(who.access_token, toolCall('list_recent_calls', {}, i)).then((a) => ({ ...a, name, i })),
          post(who.access_token, toolCall('list_locations', {}, i)).then((a) => ({ ...a, who, i })),
        ]);
      }),
    );
    for (const [calls, locations] of rounds) {
      assert.equal(calls.status, 200);
      const answer = JSON.parse(calls.body);
      assert.equal(answer.id, calls.i);
      assert.deepEqual(
        answer.result.structuredContent.calls.map((c: { summary: string }) => c.summary),
        [calls.name],
      );
      // The calls:read token is refused list_locations (403 step-up); the other is answered.
      assert.equal(locations.status, locations.who === readsCalls ? 403 : 200);
      if (locations.status === 200) assert.equal(JSON.parse(locations.body).id, locations.i);
    }
  });
});
