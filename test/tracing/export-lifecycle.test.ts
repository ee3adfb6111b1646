// Trace export from a real `switchboard serve` to an OTLP receiver in this
// process (docs/operations.md, "Traces"): the spans waiting are exported on
// SIGTERM; a caller's sampled flag 00 is followed with export on; the
// OTEL_TRACES_SAMPLER variable is honoured; the outcomes a worker records are
// a span of their own, `record delivery outcomes`, linked to the call.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { fleetEnv, seedTenant, startServe, stopProcess, type Served, type Tenant } from '../helpers/fleet.ts';
import { startHttpsTarget, type HttpsTarget, type RecordedRequest } from '../helpers/https-target.ts';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.ts';

const CALLER_SPAN = '00f067aa0ba902b7';

interface Rig {
  db: TestDatabase;
  target: HttpsTarget;
  receiver: OtlpReceiver;
  serve: Served;
  tenant: Tenant;
}

/** A serve exporting over http/json, batches held for a minute: nothing leaves before SIGTERM but a full batch. */
async function startRig(otel: Record<string, string>): Promise<Rig> {
  const db = await createTestDatabase();
  const target = await startHttpsTarget();
  const receiver = await startOtlpReceiver();
  const env = fleetEnv(db.url, {
    LOG_LEVEL: 'info',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '60000',
    ...otel,
  });
  const serve = await startServe(env);
  const tenant = await seedTenant(db.url, serve.url, () => `${target.url}/hooks/traced`);
  return { db, target, receiver, serve, tenant };
}

async function stopRig(rig: Rig | undefined): Promise<void> {
  if (!rig) return;
  await stopProcess(rig.serve);
  await rig.tenant.close();
  await rig.target.close();
  await rig.receiver.close();
  await rig.db.drop();
}

/** POST /calls (with `traceparent` if given); resolves to the receiver's request for it. */
async function call(rig: Rig, traceparent?: string): Promise<RecordedRequest> {
  const before = rig.target.requests.length;
  const res = await fetch(`${rig.serve.url}/calls`, {
    method: 'POST',
    headers: { 'x-user-token': rig.tenant.token, 'content-type': 'application/json', ...(traceparent ? { traceparent } : {}) },
    body: JSON.stringify({ summary: 'Traced call', duration_seconds: 3 }),
  });
  assert.equal(res.status, 201);
  const [delivered] = (await rig.target.waitForRequests(before + 1, 20_000)).slice(before);
  return delivered!;
}

/** The trace id and sampled flag of the traceparent a receiver got. */
function received(request: RecordedRequest): { traceId: string; sampled: boolean } {
  const match = /^00-([0-9a-f]{32})-[0-9a-f]{16}-0([01])$/.exec(String(request.headers.traceparent));
  assert.ok(match, `traceparent ${String(request.headers.traceparent)}`);
  return { traceId: match[1]!, sampled: match[2] === '1' };
}

describe('trace export: SIGTERM, sampling, the outcomes span', () => {
  let rig: Rig | undefined;
  after(() => stopRig(rig));

  test('spans waiting are exported on SIGTERM; a caller’s sampled flag 00 is followed; record delivery outcomes links to the call', async () => {
    rig = await startRig({});
    const sampledTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const unsampledTrace = '5bf92f3577b34da6a3ce929d0e0e4737';
    const sampled = await call(rig, `00-${sampledTrace}-${CALLER_SPAN}-01`);
    const unsampled = await call(rig, `00-${unsampledTrace}-${CALLER_SPAN}-00`);
    assert.deepEqual(received(sampled), { traceId: sampledTrace, sampled: true });
    assert.deepEqual(received(unsampled), { traceId: unsampledTrace, sampled: false }, 'the caller’s decision goes on to the receiver');
    // Twenty calls at once: their attempts end together, and the outcomes that wait are recorded as one batch.
    const traces = Array.from({ length: 20 }, (_, i) => `${sampledTrace.slice(0, 30)}${String(i).padStart(2, '0')}`);
    const before = rig.target.requests.length;
    await Promise.all(
      traces.map((traceId) =>
        fetch(`${rig!.serve.url}/calls`, {
          method: 'POST',
          headers: {
            'x-user-token': rig!.tenant.token,
            'content-type': 'application/json',
            traceparent: `00-${traceId}-${CALLER_SPAN}-01`,
          },
          body: JSON.stringify({ summary: 'One of many', duration_seconds: 2 }),
        }).then((res) => assert.equal(res.status, 201)),
      ),
    );
    await rig.target.waitForRequests(before + traces.length, 20_000);
    assert.equal(rig.receiver.exports.length, 0, 'nothing exported yet: the batch waits for its minute');

    await stopProcess(rig.serve);
    const spans = await rig.receiver.spans();
    const ofSampled = spans.filter((span) => span.traceId === sampledTrace);
    for (const name of ['POST /calls', 'deliver call.completed']) {
      assert.ok(
        ofSampled.some((span) => span.name === name),
        `${name} exported on SIGTERM, among ${ofSampled.map((s) => s.name).join(', ')}`,
      );
    }
    assert.deepEqual(
      spans.filter((span) => span.traceId === unsampledTrace).map((span) => span.name),
      [],
      'nothing of the trace the caller did not sample',
    );
    const attempts = new Map(spans.filter((span) => span.name === 'deliver call.completed').map((span) => [span.spanId, span]));
    const records = spans.filter((span) => span.name === 'record delivery outcomes');
    assert.ok(records.length > 0, 'at least one batch of outcomes among twenty attempts ending together');
    for (const record of records) {
      assert.equal(record.parentSpanId, '', 'a trace of its own');
      assert.ok(record.links.length >= 2, 'linked to each attempt it recorded');
      for (const link of record.links) assert.equal(attempts.get(link.spanId)?.traceId, link.traceId, 'each link is an attempt span');
    }
  });

  test('OTEL_TRACES_SAMPLER=parentbased_always_off: a call that arrives without a decision is not recorded; a sampled caller’s is', async () => {
    await stopRig(rig);
    rig = await startRig({ OTEL_TRACES_SAMPLER: 'parentbased_always_off' });
    const sampledTrace = '6bf92f3577b34da6a3ce929d0e0e4738';
    const withDecision = await call(rig, `00-${sampledTrace}-${CALLER_SPAN}-01`);
    const without = await call(rig);
    assert.equal(received(withDecision).sampled, true);
    const own = received(without);
    assert.equal(own.sampled, false, 'the sampler’s decision is sent on');
    await stopProcess(rig.serve);
    const spans = await rig.receiver.spans();
    assert.ok(spans.some((span) => span.traceId === sampledTrace && span.name === 'POST /calls'));
    assert.deepEqual(
      spans.filter((span) => span.traceId === own.traceId).map((span) => span.name),
      [],
    );
    assert.equal(
      spans.some((span) => span.name === 'claim deliveries'),
      false,
      'work that starts its own trace is not sampled either',
    );
  });
});
