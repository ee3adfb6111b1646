// One assistant's whole session against a running Switchboard, as docs/mcp.md
// tells a user to connect one: discovery from the 401, registration (by a
// metadata document or RFC 7591), sign-in and consent, every tool, and the
// step-ups to the location scopes. Shared by the single-process and the
// two-process tests.
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Pool } from '../../src/db/pool.ts';
import { createCall } from '../../src/calls/calls.service.ts';
import { createMember } from './fixtures.ts';
import { connected, signIn, stepUp, TestProvider, UserAgent } from './mcp-client.ts';

export const TOOL_NAMES = [
  'list_recent_calls',
  'search_calls',
  'get_call',
  'list_locations',
  'create_location',
  'update_location',
  'set_primary_location',
  'delete_location',
  'list_service_areas',
  'create_service_area',
  'update_service_area',
  'delete_service_area',
  'get_delivery_health',
];

// biome-ignore lint/suspicious/noExplicitAny: structured tool results are read field by field, as a client would.
type Structured = Record<string, any>;

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Structured> {
  const result = await client.callTool({ name, arguments: args });
  assert.notEqual(result.isError, true, `${name} failed: ${JSON.stringify(result.content)}`);
  const text = (result.content as { type: string; text: string }[])[0]!;
  assert.equal(text.type, 'text');
  assert.ok(text.text.length > 0, `${name} has a text result`);
  return result.structuredContent as Structured;
}

export interface AssistantRun {
  provider: TestProvider;
  /** Every tool called, in order. */
  called: string[];
  organizationId: string;
}

export async function runAssistant(baseUrl: string, pool: Pool, options: { documentUrl?: string } = {}): Promise<AssistantRun> {
  const member = await createMember(pool);
  const organizationId = member.org.id;
  const recorded = await createCall(pool, organizationId, { summary: 'Caller asked about the Leeds office hours', duration_seconds: 95 });
  const provider = new TestProvider(options.documentUrl);
  const agent = new UserAgent(baseUrl);
  const called: string[] = [];
  const use = async (client: Client, name: string, args: Record<string, unknown> = {}) => {
    called.push(name);
    return call(client, name, args);
  };

  const { client, url } = await signIn(baseUrl, provider, agent, member.email);
  assert.equal(url.searchParams.get('resource'), `${baseUrl}/mcp`);
  assert.equal(url.searchParams.get('scope'), 'calls:read');
  assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
  if (options.documentUrl) assert.equal(provider.client?.client_id, options.documentUrl);
  else assert.match(provider.client?.client_id ?? '', /^[0-9a-f]{32}$/);

  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), [...TOOL_NAMES].sort());
  for (const tool of tools) {
    assert.equal(tool.inputSchema.type, 'object');
    assert.equal(tool.outputSchema?.type, 'object');
    assert.equal(typeof tool.annotations?.readOnlyHint, 'boolean');
  }

  const recent = await use(client, 'list_recent_calls', { limit: 5 });
  assert.deepEqual(
    recent.calls.map((c: Structured) => c.id),
    [recorded.id],
  );
  assert.equal((await use(client, 'search_calls', { status: 'completed', since: '2000-01-01T00:00:00Z' })).calls.length, 1);
  // GET /calls's parameters by the same names, the same rules: an inbound-only search finds none of an unknown direction's calls.
  const inbound = await client.callTool({ name: 'search_calls', arguments: { direction: 'inbound', number: '+44 20 7946 0000' } });
  assert.notEqual(inbound.isError, true);
  const badNumber = await client.callTool({ name: 'search_calls', arguments: { number: 'not a number' } });
  assert.equal(badNumber.isError, true);
  assert.match((badNumber.content as { text: string }[])[0]!.text, /number/);
  assert.equal((await use(client, 'get_call', { id: recorded.id })).call.summary, recorded.summary);
  assert.deepEqual((await use(client, 'get_delivery_health')).subscriptions, []);

  // calls:read does not cover a location write: 403, then the user consents to more.
  const write = await stepUp(baseUrl, provider, client, agent, member.email, {
    name: 'create_location',
    arguments: { name: 'Bristol office' },
  });
  assert.equal(write.scope, 'calls:read locations:write');
  assert.equal(write.url.searchParams.get('scope'), 'calls:read locations:write');
  const writer = await connected(baseUrl, provider);
  const created = (await use(writer, 'create_location', { name: 'Bristol office', city: 'Bristol', country: 'GB' })).location;
  const read = await stepUp(baseUrl, provider, writer, agent, member.email, { name: 'list_locations', arguments: {} });
  assert.equal(read.scope, 'calls:read locations:read locations:write');

  const full = await connected(baseUrl, provider);
  assert.deepEqual(
    (await use(full, 'list_locations')).locations.map((l: Structured) => l.id),
    [created.id],
  );
  assert.equal((await use(full, 'update_location', { id: created.id, name: 'Bristol HQ' })).location.name, 'Bristol HQ');
  assert.equal((await use(full, 'set_primary_location', { id: created.id })).location.is_primary, true);
  const area = (await use(full, 'create_service_area', { label: 'Bath', radius_km: 20, location_id: created.id })).service_area;
  assert.equal((await use(full, 'list_service_areas')).service_areas.length, 1);
  assert.equal((await use(full, 'update_service_area', { id: area.id, radius_km: 25 })).service_area.radius_km, 25);
  assert.deepEqual(await use(full, 'delete_service_area', { id: area.id }), { deleted: area.id });
  assert.deepEqual(await use(full, 'delete_location', { id: created.id }), { deleted: created.id });
  await Promise.all([client.close(), writer.close(), full.close()]);
  return { provider, called, organizationId };
}
