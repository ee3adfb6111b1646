// A collector that is away (docs/operations.md, "Traces"): it costs dropped
// spans, never a slower request, and the export queue (OTEL_BSP_MAX_QUEUE_SIZE)
// is bounded. A real `switchboard serve` exports to (a) a collector that takes
// export requests and never answers, (b) a port that refuses connections. In
// both the exporter is provably stuck while requests keep answering: (a) the
// export request it sent is still held open when they are done, (b) its queue
// is full, which it only is while an export is still under way (retrying);
// /metrics shows the queue at most its bound and the spans dropped past it.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { fleetEnv, seedTenant, startServe, stopProcess, type Served, type Tenant } from '../helpers/fleet.ts';
import { startHttpsTarget, type HttpsTarget } from '../helpers/https-target.ts';

const QUEUE_SIZE = 50;
/** What an export may take before the exporter gives up: far beyond the whole test, so a request waiting for one would show. */
const EXPORT_TIMEOUT_MS = 60_000;
/** No request may take this long: one waiting for an export would take EXPORT_TIMEOUT_MS, or (b) the exporter's retries (over 8 s). */
const REQUEST_BOUND_MS = 5000;

/** An OTLP endpoint: answers 200 while healthy, then takes export requests and never answers them. */
async function startCollector() {
  let hanging = false;
  const held: { closed: boolean }[] = [];
  let answered = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    if (!hanging) {
      req.on('end', () => {
        answered++;
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
      return;
    }
    const request = { closed: false };
    held.push(request);
    res.on('close', () => (request.closed = true));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held,
    answered: () => answered,
    hang: () => (hanging = true),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A port nothing listens on: connections to it are refused. */
async function refusedPort(): Promise<number> {
  const server = http.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Rig {
  db: TestDatabase;
  target: HttpsTarget;
  serve: Served;
  tenant: Tenant;
}

async function startRig(endpoint: string): Promise<Rig> {
  const db = await createTestDatabase();
  const target = await startHttpsTarget();
  const serve = await startServe(
    fleetEnv(db.url, {
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_TIMEOUT: String(EXPORT_TIMEOUT_MS),
      OTEL_BSP_EXPORT_TIMEOUT: String(EXPORT_TIMEOUT_MS),
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_BSP_MAX_QUEUE_SIZE: String(QUEUE_SIZE),
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '10',
    }),
  );
  const tenant = await seedTenant(db.url, serve.url, () => `${target.url}/hooks/traced`);
  return { db, target, serve, tenant };
}

async function stopRig(rig: Rig | undefined): Promise<void> {
  if (!rig) return;
  // SIGKILL: the spans waiting would be exported to a collector that is away; what a stop does is not this test's.
  await stopProcess(rig.serve, 'SIGKILL');
  await rig.tenant.close();
  await rig.target.close();
  await rig.db.drop();
}

/** One POST /calls (each makes a server span and its statements' spans); resolves to its time in ms. */
async function timedCall(rig: Rig): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${rig.serve.url}/calls`, {
    method: 'POST',
    headers: { 'x-user-token': rig.tenant.token, 'content-type': 'application/json' },
    body: JSON.stringify({ summary: 'A traced call', duration_seconds: 5 }),
    // A request held by the exporter fails here, long before the export's own time-out.
    signal: AbortSignal.timeout(20_000),
  });
  await res.arrayBuffer();
  assert.equal(res.status, 201);
  return performance.now() - started;
}

async function timedCalls(rig: Rig, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) times.push(await timedCall(rig));
  return times;
}

/** The span queue's figures on /metrics. */
async function queueMetrics(rig: Rig): Promise<{ queued: number; queueFull: number; exportFailed: number }> {
  const text = await (await fetch(`${rig.serve.url}/metrics`)).text();
  const read = (pattern: RegExp) => {
    const match = pattern.exec(text);
    assert.ok(match, `${pattern} on /metrics`);
    return Number(match[1]);
  };
  return {
    queued: read(/^switchboard_trace_span_queue_size (\d+)$/m),
    queueFull: read(/^switchboard_trace_spans_dropped_total\{reason="queue_full"\} (\d+)$/m),
    exportFailed: read(/^switchboard_trace_spans_dropped_total\{reason="export_failed"\} (\d+)$/m),
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const summary = (values: number[]) => `median ${median(values).toFixed(0)} ms, max ${Math.max(...values).toFixed(0)} ms`;

describe('a trace collector that is away', () => {
  const rigs: Rig[] = [];
  let collector: Awaited<ReturnType<typeof startCollector>> | undefined;
  after(async () => {
    for (const rig of rigs) await stopRig(rig);
    await collector?.close();
  });

  test('one that never answers: requests answer while the exporter waits on it; the queue holds at most its bound', async () => {
    collector = await startCollector();
    const rig = await startRig(collector.url);
    rigs.push(rig);
    const healthy = await timedCalls(rig, 20);
    while (collector.answered() === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal((await queueMetrics(rig)).queueFull, 0, 'nothing dropped while the collector answers');

    collector.hang();
    // The exporter is now stuck on this export request (one export at a time) until its 60 s time-out.
    while (collector.held.length === 0) await timedCall(rig);
    const away = await timedCalls(rig, 60);
    const metrics = await queueMetrics(rig);
    process.stdout.write(`# collector healthy: ${summary(healthy)}; collector hanging: ${summary(away)}; ${JSON.stringify(metrics)}\n`);

    assert.equal(collector.held[0]!.closed, false, 'every request answered while the first export was still waiting for its answer');
    for (const ms of away) assert.ok(ms < REQUEST_BOUND_MS, `a request took ${ms.toFixed(0)} ms`);
    assert.ok(metrics.queued <= QUEUE_SIZE, `queue ${metrics.queued} within OTEL_BSP_MAX_QUEUE_SIZE ${QUEUE_SIZE}`);
    assert.ok(metrics.queueFull > 0, `spans past the bound dropped: ${JSON.stringify(metrics)}`);
  });

  test('a port that refuses connections: requests answer while the exporter retries; the queue holds at most its bound', async () => {
    const rig = await startRig(`http://127.0.0.1:${await refusedPort()}`);
    rigs.push(rig);
    // Each refused export is retried for seconds (with backoff); meanwhile spans queue up to the bound.
    const filling: number[] = [];
    for (let metrics = await queueMetrics(rig); metrics.queueFull === 0; metrics = await queueMetrics(rig)) {
      assert.ok(filling.length < 300, `the queue never filled: ${JSON.stringify(metrics)}`);
      filling.push(await timedCall(rig));
    }
    const before = await queueMetrics(rig);
    const full = await timedCalls(rig, 30);
    const metrics = await queueMetrics(rig);
    process.stdout.write(
      `# collector refusing: ${summary(full)} with the queue full (${filling.length} calls to fill it); ${JSON.stringify(before)} -> ${JSON.stringify(metrics)}\n`,
    );

    // Spans went on being dropped during these requests: the queue stayed full, the exporter still busy, and they answered.
    assert.ok(metrics.queueFull > before.queueFull, 'dropped during the requests');
    for (const ms of [...filling, ...full]) assert.ok(ms < REQUEST_BOUND_MS, `a request took ${ms.toFixed(0)} ms`);
    assert.ok(metrics.queued <= QUEUE_SIZE, `queue ${metrics.queued} within OTEL_BSP_MAX_QUEUE_SIZE ${QUEUE_SIZE}`);
  });
});
