// A span per MCP tool call, exported over OTLP from a real `switchboard serve`
// (docs/mcp.md): it names the tool, under the POST /mcp request's trace, and
// carries none of the arguments' values (a phone number searched for).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createMember, type Member } from '../helpers/fixtures.ts';
import { fleetEnv, startServe, stopProcess, type Served } from '../helpers/fleet.ts';
import { mcpPost, publicClientToken, toolCall } from '../helpers/mcp-token.ts';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.ts';
import { waitFor } from '../helpers/webhooks.ts';
import { freePort } from '../../src/free-port.ts';

// The number searched for, in E.164 and in the spelling the tool is given.
const NUMBER = '+442079460123';
const SPELLED = '+44 20 7946 0123';

describe('a tools/call is a span of its own', () => {
  let db: TestDatabase;
  let receiver: OtlpReceiver;
  let serve: Served;
  let baseUrl: string;
  let member: Member;

  before(async () => {
    db = await createTestDatabase();
    receiver = await startOtlpReceiver();
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    serve = await startServe(
      fleetEnv(db.url, {
        PORT: String(port),
        BASE_URL: baseUrl,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '100',
      }),
      ['--no-worker'],
    );
    member = await createMember(db.pool);
  });
  after(async () => {
    if (serve) await stopProcess(serve);
    await receiver?.close();
    await db?.drop();
  });

  test('search_calls: a span naming the tool, in the request’s trace, without the number searched for', async () => {
    const created = await fetch(`${baseUrl}/calls`, {
      method: 'POST',
      headers: { 'x-user-token': member.token, 'content-type': 'application/json' },
      body: JSON.stringify({ summary: 'Asked for a quote', duration_seconds: 30, direction: 'inbound', from_number: SPELLED }),
    });
    assert.equal(created.status, 201);
    const token = await publicClientToken(baseUrl, member.email);

    const response = await mcpPost(baseUrl, token.access_token, toolCall('search_calls', { number: SPELLED, direction: 'inbound' }));
    assert.equal(response.status, 200);
    const answer = (await response.json()) as { result: { isError?: boolean; structuredContent: { calls: { from_number: string }[] } } };
    assert.notEqual(answer.result.isError, true);
    assert.equal(answer.result.structuredContent.calls[0]?.from_number, NUMBER, 'the tool found the call by its number');

    const spans = await waitFor(
      'the tool span exported',
      async () => {
        const all = await receiver.spans();
        return all.some((span) => span.name === 'mcp tools/call') && all;
      },
      20_000,
    );
    const tool = spans.find((span) => span.name === 'mcp tools/call');
    assert.ok(tool, `a tool span among ${spans.map((span) => span.name).join(', ')}`);
    assert.equal(tool.attributes['gen_ai.tool.name'], 'search_calls');
    const request = spans.find((span) => span.name === 'POST /mcp');
    assert.ok(request, 'the request span');
    assert.equal(tool.traceId, request.traceId, 'the tool span belongs to the request’s trace');

    // Neither the tool span nor any other exported span holds the arguments' values.
    for (const span of spans) {
      const attributes = JSON.stringify(span.attributes);
      for (const value of [NUMBER, SPELLED, '7946']) assert.equal(attributes.includes(value), false, `${span.name} holds ${value}`);
    }
    for (const received of receiver.exports) {
      for (const value of [NUMBER, SPELLED, '79460123']) assert.equal(received.body.includes(value), false, `an export holds ${value}`);
    }
  });
});
