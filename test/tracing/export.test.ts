// Trace export from a real `switchboard serve` (HTTP and its delivery worker)
// to an OTLP receiver in this process, over http/json and http/protobuf, and
// no export at all when it is off (docs/operations.md, "Traces").
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { fleetEnv, seedTenant, startServe, stopProcess, type Served, type Tenant } from '../helpers/fleet.ts';
import { startHttpsTarget, type HttpsTarget, type RecordedRequest } from '../helpers/https-target.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.ts';
import { waitFor } from '../helpers/webhooks.ts';

const INCOMING_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const INCOMING_SPAN = '00f067aa0ba902b7';
const SUMMARY = 'Jane Roe, 07700 900123, asked to move her boiler service';
const SERVER = 2;
const CLIENT = 3;

interface Rig {
  db: TestDatabase;
  target: HttpsTarget;
  receiver: OtlpReceiver;
  serve: Served;
  tenant: Tenant;
}

async function startRig(otel: Record<string, string>, receiver?: OtlpReceiver): Promise<Rig> {
  const db = await createTestDatabase();
  const target = await startHttpsTarget();
  const otlp = receiver ?? (await startOtlpReceiver());
  const env = fleetEnv(db.url, {
    LOG_LEVEL: 'info',
    OTEL_BSP_SCHEDULE_DELAY: '100',
    ...Object.fromEntries(Object.entries(otel).map(([name, value]) => [name, value.replace('{receiver}', otlp.url)])),
  });
  const serve = await startServe(env);
  const tenant = await seedTenant(db.url, serve.url, () => `${target.url}/hooks/traced`);
  return { db, target, receiver: otlp, serve, tenant };
}

async function stopRig(rig: Rig | undefined): Promise<void> {
  if (!rig) return;
  await stopProcess(rig.serve);
  await rig.tenant.close();
  await rig.target.close();
  await rig.receiver.close();
  await rig.db.drop();
}

/** POST /calls with a traceparent; resolves to the call id and the receiver's request. */
async function tracedCall(rig: Rig, traceparent?: string): Promise<{ callId: string; delivered: RecordedRequest }> {
  const before = rig.target.requests.length;
  const res = await fetch(`${rig.serve.url}/calls`, {
    method: 'POST',
    headers: {
      'x-user-token': rig.tenant.token,
      'content-type': 'application/json',
      ...(traceparent ? { traceparent, tracestate: 'vendor=abc' } : {}),
    },
    body: JSON.stringify({ summary: SUMMARY, duration_seconds: 61 }),
  });
  assert.equal(res.status, 201);
  const callId = ((await res.json()) as { id: string }).id;
  const [delivered] = (await rig.target.waitForRequests(before + 1, 20_000)).slice(before);
  return { callId, delivered: delivered! };
}

function parentId(traceparent: unknown): string {
  const match = /^00-[0-9a-f]{32}-([0-9a-f]{16})-0[01]$/.exec(String(traceparent));
  assert.ok(match, `traceparent ${String(traceparent)}`);
  return match[1]!;
}

/** The spans of one call, from request to attempt, once the attempt's span has been exported. */
async function callSpans(receiver: OtlpReceiver, traceId: string): Promise<ReceivedSpan[]> {
  return waitFor(
    'the attempt span exported',
    async () => {
      const spans = (await receiver.spans()).filter((span) => span.traceId === traceId);
      return spans.some((span) => span.name === 'deliver call.completed') && spans;
    },
    20_000,
  );
}

/** What the spans of one call must show, whatever the protocol. */
function checkCallTrace(spans: ReceivedSpan[], delivered: RecordedRequest, callId: string, serviceName: string): void {
  const server = spans.find((span) => span.kind === SERVER && span.name === 'POST /calls');
  assert.ok(server, `a server span POST /calls among ${spans.map((span) => span.name).join(', ')}`);
  assert.equal(server.parentSpanId, INCOMING_SPAN, "a child of the caller's span");
  assert.equal(server.attributes['http.route'], '/calls');
  assert.equal(server.attributes['http.response.status_code'], 201);
  const attempt = spans.find((span) => span.name === 'deliver call.completed');
  assert.ok(attempt);
  assert.equal(attempt.kind, CLIENT);
  assert.equal(attempt.parentSpanId, server.spanId, "the attempt is the request span's child");
  assert.equal(parentId(delivered.headers.traceparent), attempt.spanId, "the receiver's parent id is the attempt span");
  assert.equal(delivered.headers.tracestate, 'vendor=abc');
  assert.equal(attempt.attributes['switchboard.call.id'], callId);
  assert.equal(attempt.attributes['switchboard.delivery.id'], delivered.headers['x-delivery-id']);
  assert.equal(attempt.attributes['switchboard.delivery.attempt'], 1);
  assert.equal(attempt.attributes['switchboard.delivery.outcome'], 'succeeded');
  assert.equal(attempt.attributes['http.response.status_code'], 200);
  assert.equal(attempt.attributes['server.address'], '127.0.0.1');
  // PostgreSQL statements under the request, by name, never their values.
  const statements = spans.filter((span) => span.attributes['db.system.name'] === 'postgresql');
  assert.ok(statements.length > 0, 'statement spans in the trace');
  for (const span of spans) assert.equal(span.resource['service.name'], serviceName);
}

/** No summary, token, secret or password anywhere in what was exported. */
function checkNothingPersonal(rig: Rig, bodies: Buffer[]): void {
  const forbidden = [SUMMARY, 'Jane Roe', rig.tenant.token];
  for (const body of bodies) {
    for (const text of forbidden) assert.equal(body.includes(text), false, `an export holds ${text}`);
    assert.equal(/password|secret_ciphertext|x-user-token/i.test(body.toString('latin1')), false);
  }
}

describe('trace export over OTLP http/json', () => {
  let rig: Rig;
  before(async () => {
    rig = await startRig({
      OTEL_EXPORTER_OTLP_ENDPOINT: '{receiver}',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=test-key',
      OTEL_SERVICE_NAME: 'switchboard-traced',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
    });
  });
  after(() => stopRig(rig));

  test('the spans of one call, from request to attempt, share its trace, carry the service name and nothing personal', async () => {
    const { callId, delivered } = await tracedCall(rig, `00-${INCOMING_TRACE}-${INCOMING_SPAN}-01`);
    const spans = await callSpans(rig.receiver, INCOMING_TRACE);
    checkCallTrace(spans, delivered, callId, 'switchboard-traced');
    const first = rig.receiver.exports[0]!;
    assert.equal(first.path, '/v1/traces');
    assert.equal(first.contentType, 'application/json');
    assert.equal(first.headers['x-collector-key'], 'test-key', 'OTEL_EXPORTER_OTLP_HEADERS');
    assert.equal(spans[0]!.resource['deployment.environment.name'], 'test', 'OTEL_RESOURCE_ATTRIBUTES');
    checkNothingPersonal(
      rig,
      rig.receiver.exports.map((received) => received.body),
    );
  });

  test('log lines written while a span is active carry its trace_id and span_id', async () => {
    // A call of its own, so that the test passes alone.
    const traceId = randomBytes(16).toString('hex');
    await tracedCall(rig, `00-${traceId}-${randomBytes(8).toString('hex')}-01`);
    const spans = await callSpans(rig.receiver, traceId);
    const server = spans.find((span) => span.name === 'POST /calls')!;
    const attempt = spans.find((span) => span.name === 'deliver call.completed')!;
    const lines = await waitFor('the attempt log line', async () => {
      const parsed = rig.serve
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      return parsed.some((line) => line.msg === 'webhook delivery attempt' && line.trace_id === traceId) && parsed;
    });
    const request = lines.find((line) => line.msg === 'request completed' && line.trace_id === traceId);
    assert.ok(request, 'the request line');
    assert.equal(request.span_id, server.spanId);
    const attemptLine = lines.find((line) => line.msg === 'webhook delivery attempt' && line.trace_id === traceId);
    assert.equal(attemptLine!.span_id, attempt.spanId);
  });

  test('a call without a traceparent starts its own trace at the request; the attempt log shows it', async () => {
    const { delivered } = await tracedCall(rig);
    const traceId = String(delivered.headers.traceparent).split('-')[1]!;
    const spans = await callSpans(rig.receiver, traceId);
    const server = spans.find((span) => span.name === 'POST /calls')!;
    assert.equal(server.parentSpanId, '', 'a root span');
    const log = await fetch(`${rig.serve.url}/webhooks/${rig.tenant.subscriptionIds[0]}/deliveries`, {
      headers: { 'x-user-token': rig.tenant.token },
    });
    const attempts = (await log.json()) as { trace_id: string }[];
    assert.ok(attempts.some((attempt) => attempt.trace_id === traceId));
  });
});

describe('trace export: work done for many calls', () => {
  let rig: Rig;
  before(async () => {
    rig = await startRig({ OTEL_EXPORTER_OTLP_ENDPOINT: '{receiver}', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
  });
  after(() => stopRig(rig));

  test('a batch of calls and a claim are spans of their own, linked to the calls they served, not their parents', async () => {
    const traces = Array.from({ length: 20 }, (_, i) => `${INCOMING_TRACE.slice(0, 30)}${String(i).padStart(2, '0')}`);
    await Promise.all(
      traces.map((traceId) =>
        fetch(`${rig.serve.url}/calls`, {
          method: 'POST',
          headers: {
            'x-user-token': rig.tenant.token,
            'content-type': 'application/json',
            traceparent: `00-${traceId}-${INCOMING_SPAN}-01`,
          },
          body: JSON.stringify({ summary: SUMMARY, duration_seconds: 5 }),
        }).then((res) => assert.equal(res.status, 201)),
      ),
    );
    await rig.target.waitForRequests(20, 20_000);
    const linked = (name: string) =>
      waitFor(`${name} spans linked to every call`, async () => {
        const spans = (await rig.receiver.spans()).filter((span) => span.name === name);
        const served = new Set(spans.flatMap((span) => span.links.map((link) => link.traceId)));
        return traces.every((traceId) => served.has(traceId)) && spans;
      });
    const claims = await linked('claim deliveries');
    for (const claim of claims) {
      assert.equal(claim.parentSpanId, '', 'a claim starts a trace of its own');
      assert.ok(!traces.includes(claim.traceId));
    }
    // The calls that arrived together were written by one statement: that batch links to each of their server spans.
    const spans = await rig.receiver.spans();
    const batches = spans.filter((span) => span.name === 'write completed calls');
    assert.ok(batches.length > 0, 'at least one batch of calls among 20 sent at once');
    for (const batch of batches) {
      assert.equal(batch.parentSpanId, '');
      assert.ok(batch.links.length >= 2);
      for (const link of batch.links) {
        const server = spans.find((span) => span.spanId === link.spanId);
        assert.equal(server?.name, 'POST /calls', 'linked to the request that handed the call over');
      }
      assert.ok(
        spans.some((span) => span.parentSpanId === batch.spanId && span.attributes['db.system.name'] === 'postgresql'),
        "the batch's statement is its child",
      );
    }
  });
});

describe('trace export over OTLP http/protobuf', () => {
  let rig: Rig;
  before(async () => {
    rig = await startRig({
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '{receiver}/custom/traces',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    });
  });
  after(() => stopRig(rig));

  test('exports arrive as application/x-protobuf and decode with the OTLP .proto files into the same spans', async () => {
    const { callId, delivered } = await tracedCall(rig, `00-${INCOMING_TRACE}-${INCOMING_SPAN}-01`);
    const spans = await callSpans(rig.receiver, INCOMING_TRACE);
    assert.ok(rig.receiver.exports.length > 0);
    for (const received of rig.receiver.exports) {
      assert.equal(received.contentType, 'application/x-protobuf');
      assert.equal(received.path, '/custom/traces', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, as given');
    }
    checkCallTrace(spans, delivered, callId, 'switchboard');
    checkNothingPersonal(
      rig,
      rig.receiver.exports.map((received) => received.body),
    );
  });
});

for (const [title, otel] of [
  ['no OTEL_* variable', {}],
  ['OTEL_TRACES_EXPORTER=none with an endpoint', { OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: '{receiver}' }],
  ['OTEL_SDK_DISABLED=true with an endpoint', { OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: '{receiver}' }],
] as const) {
  describe(`export off: ${title}`, () => {
    let rig: Rig;
    before(async () => {
      rig = await startRig(otel);
    });
    after(() => stopRig(rig));

    test('the receiver still gets the traceparent of the call; nothing reaches the OTLP endpoint', async () => {
      const { delivered } = await tracedCall(rig, `00-${INCOMING_TRACE}-${INCOMING_SPAN}-01`);
      assert.match(String(delivered.headers.traceparent), new RegExp(`^00-${INCOMING_TRACE}-[0-9a-f]{16}-01$`));
      assert.notEqual(parentId(delivered.headers.traceparent), INCOMING_SPAN);
      // More than the batch delay (100 ms) several times over: an export would have been sent by now.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      assert.equal(rig.receiver.exports.length, 0);
      assert.equal(/"trace_id"/.test(rig.serve.output()), false, 'no trace fields on log lines');
    });
  });
}
