// MCP without state between requests (docs/mcp.md): the same assistant
// session as sdk-client.test.ts against two `serve` processes behind a
// round-robin proxy, so consecutive requests of one client (discovery,
// registration, consent, token, tools/call) land on different processes.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { fleetEnv, startServe, stopProcess, type Served } from '../helpers/fleet.ts';
import { runAssistant, TOOL_NAMES } from '../helpers/mcp-assistant.ts';

/** A round-robin HTTP proxy: request n goes to target n mod 2; `served` counts the /mcp POSTs each answered. */
function roundRobin(targets: () => string[]) {
  let next = 0;
  const served = [0, 0];
  const server = http.createServer((request, response) => {
    const index = next++ % 2;
    if (request.method === 'POST' && request.url === '/mcp') served[index]!++;
    const target = new URL(request.url!, targets()[index]);
    const upstream = http.request(target, { method: request.method, headers: request.headers }, (answer) => {
      response.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(response);
    });
    upstream.on('error', () => response.destroy());
    request.pipe(upstream);
  });
  return { server, served };
}

describe('an MCP assistant across two serve processes behind a round-robin proxy', () => {
  let db: TestDatabase;
  let apis: Served[] = [];
  const proxy = roundRobin(() => apis.map((api) => api.url));
  let proxyUrl = '';

  before(async () => {
    db = await createTestDatabase();
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.server.address() as AddressInfo).port}`;
    const env = fleetEnv(db.url, { BASE_URL: proxyUrl });
    apis = await Promise.all([startServe(env, ['--no-worker']), startServe(env, ['--no-worker'])]);
  });
  after(async () => {
    await Promise.all(apis.map((api) => stopProcess(api, 'SIGKILL')));
    proxy.server.closeAllConnections();
    await new Promise<void>((resolve) => proxy.server.close(() => resolve()));
    await db?.drop();
  });

  test('sign-in, consent, step-ups and every tool, each process answering some of the /mcp requests', async () => {
    const run = await runAssistant(proxyUrl, db.pool);
    assert.deepEqual([...new Set(run.called)].sort(), [...TOOL_NAMES].sort());
    assert.ok(proxy.served[0]! > 0 && proxy.served[1]! > 0, `both processes answered /mcp: ${proxy.served.join(' and ')}`);
  });
});
