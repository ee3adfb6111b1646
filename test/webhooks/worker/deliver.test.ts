import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { closeDeliveryAgents, deliver, RESPONSE_EXCERPT_BYTES, type DeliveryOutcome } from '../../../src/webhooks/worker/deliver.ts';
import { startHttpsTarget, type HttpsTarget } from '../../helpers/https-target.ts';
import { generateTestTls } from '../../helpers/tls-certificates.ts';

const body = JSON.stringify({ id: 'call-1', summary: 'Booked — “Tuesday” ✓' });
const headers = {
  'content-type': 'application/json',
  'x-event': 'call.completed',
  'x-delivery-id': 'd-1',
  'user-agent': 'Switchboard-Webhooks/test',
};
const send = (url: string, extra: { timeoutMs?: number; allowPrivate?: boolean } = {}) =>
  deliver({ url, body, headers, timeoutMs: extra.timeoutMs ?? 5000, allowPrivate: extra.allowPrivate ?? true, allowedPorts: '*' });

function assertResponse(outcome: DeliveryOutcome): asserts outcome is Extract<DeliveryOutcome, { kind: 'response' }> {
  assert.equal(outcome.kind, 'response', JSON.stringify(outcome));
}
function assertError(outcome: DeliveryOutcome, error: string): void {
  assert.equal(outcome.kind, 'error', JSON.stringify(outcome));
  assert.equal(outcome.kind === 'error' && outcome.error, error, JSON.stringify(outcome));
}

describe('deliver to a real HTTPS target', () => {
  let target: HttpsTarget;
  before(async () => {
    target = await startHttpsTarget();
  });
  after(async () => {
    await target.close();
    await closeDeliveryAgents();
  });

  test('POSTs the body and headers exactly, verified by the test CA, and reports the answer and how long it took', async () => {
    // The target answers 150 ms after the request arrives: the latency counts that wait and no more than the call took.
    const delayMs = 150;
    target.respond(() => ({ status: 202, body: '{"accepted":true}', delayMs }));
    const before = target.requests.length;
    const started = performance.now();
    const outcome = await send(`${target.url}/hooks/zap?x=1`);
    const tookMs = performance.now() - started;
    assertResponse(outcome);
    assert.equal(outcome.status, 202);
    assert.equal(outcome.bodyExcerpt, '{"accepted":true}');
    assert.equal(outcome.retryAfter, undefined);
    // A timer may fire up to a millisecond early; the latency is rounded.
    assert.ok(
      outcome.latencyMs >= delayMs - 1 && outcome.latencyMs <= Math.ceil(tookMs),
      `latency ${outcome.latencyMs} ms, call ${tookMs.toFixed(1)} ms`,
    );
    const received = target.requests.slice(before);
    assert.equal(received.length, 1);
    const [request] = received;
    assert.equal(request?.method, 'POST');
    assert.equal(request?.url, '/hooks/zap?x=1');
    assert.equal(request?.body, body);
    for (const [name, value] of Object.entries(headers)) assert.equal(request?.headers[name], value);
    assert.equal(request?.headers['content-length'], String(Buffer.byteLength(body)));
  });

  test('reaches a name (localhost) through the resolver and checks the certificate for that name', async () => {
    target.respond(() => ({ status: 200 }));
    const before = target.requests.length;
    assertResponse(await send(`https://localhost:${target.port}/by-name`));
    assert.equal(target.requests.at(-1)?.url, '/by-name');
    assert.equal(target.requests.length, before + 1);
  });

  test('reuses the connection for consecutive deliveries', async () => {
    target.respond(() => ({ status: 204 }));
    const before = target.requests.length;
    for (const name of ['first', 'second', 'third']) {
      assertResponse(await send(`${target.url}/${name}`));
      // undici returns the socket to the pool a tick after the body ends; a worker records the outcome meanwhile.
      await new Promise((resolve) => setImmediate(resolve));
    }
    const ports = new Set(target.requests.slice(before).map((request) => request.remotePort));
    assert.equal(ports.size, 1);
  });

  test('returns a redirect as a response and never requests its Location', async () => {
    const elsewhere = await startHttpsTarget();
    try {
      target.respond(() => ({ status: 302, headers: { location: `${elsewhere.url}/stolen` } }));
      const before = target.requests.length;
      const outcome = await send(`${target.url}/moved`);
      assertResponse(outcome);
      assert.equal(outcome.status, 302);
      assert.equal(target.requests.length, before + 1);
      assert.equal(elsewhere.requests.length, 0);
    } finally {
      await elsewhere.close();
    }
  });

  test('passes Retry-After through', async () => {
    target.respond(() => ({ status: 503, headers: { 'retry-after': '120' }, body: 'busy' }));
    const outcome = await send(target.url);
    assertResponse(outcome);
    assert.equal(outcome.status, 503);
    assert.equal(outcome.retryAfter, '120');
    assert.equal(outcome.bodyExcerpt, 'busy');
  });

  test('keeps only the first 4 KiB of a large response', async () => {
    target.respond(() => ({ status: 500, body: 'x'.repeat(1024 * 1024) }));
    const outcome = await send(target.url);
    assertResponse(outcome);
    assert.equal(outcome.status, 500);
    assert.equal(RESPONSE_EXCERPT_BYTES, 4096);
    assert.equal(outcome.bodyExcerpt, 'x'.repeat(4096));
  });

  test('does not split a UTF-8 character at the 4 KiB cut, and replaces NUL', async () => {
    target.respond(() => ({ status: 400, body: `\u0000${'a'.repeat(4094)}é and more` }));
    const outcome = await send(target.url);
    assertResponse(outcome);
    assert.equal(outcome.bodyExcerpt, `\uFFFD${'a'.repeat(4094)}`);
  });

  test('times out a target that never answers after the total time limit', async () => {
    target.respond(() => ({ hang: true }));
    const before = target.requests.length;
    const outcome = await send(`${target.url}/hang`, { timeoutMs: 300 });
    assertError(outcome, 'timeout');
    assert.ok(outcome.latencyMs >= 290, `latency ${outcome.latencyMs}`);
    assert.match(outcome.kind === 'error' ? outcome.message : '', /300 ms/);
    assert.equal(target.requests.length, before + 1, 'the request did arrive');
  });

  test('keeps the status and what arrived when the body stalls past the time limit', async () => {
    target.respond(() => ({ status: 200, body: 'partial', stall: true }));
    const outcome = await send(`${target.url}/stall`, { timeoutMs: 300 });
    assertResponse(outcome);
    assert.equal(outcome.status, 200);
    assert.equal(outcome.bodyExcerpt, 'partial');
    assert.ok(outcome.latencyMs >= 290, `latency ${outcome.latencyMs}`);
  });

  test('reports a dropped connection as a connection error', async () => {
    target.respond(() => ({ destroy: true }));
    assertError(await send(`${target.url}/drop`), 'connection');
  });
});

describe('deliver to targets that cannot be reached properly', () => {
  after(() => closeDeliveryAgents());

  test('reports a refused connection as a connection error', async () => {
    const closed = await startHttpsTarget();
    const url = closed.url;
    await closed.close();
    assertError(await send(url), 'connection');
  });

  test('reports a certificate from an unknown authority as a TLS error, sending nothing', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'switchboard-untrusted-'));
    const tls = await generateTestTls(dir);
    let requests = 0;
    const server = https.createServer({ cert: await readFile(tls.certPath), key: await readFile(tls.keyPath) }, (_req, res) => {
      requests += 1;
      res.end();
    });
    try {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      const outcome = await send(`https://127.0.0.1:${port}/`);
      assertError(outcome, 'tls');
      assert.equal(requests, 0);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await rm(dir, { recursive: true, force: true });
    }
  });
});
