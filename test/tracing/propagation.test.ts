// W3C trace context with export off (docs/interface.md §6.1, traceparent):
// a call keeps the traceparent of its request, every attempt sends the call's
// trace id with a parent id of its own, and the attempt log shows the trace id.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import type { HttpsTarget } from '../helpers/https-target.ts';
import { connectPlatform, settled, startDeliveryRig, subscribeHook, type DeliveryRig } from '../helpers/webhooks.ts';
import { activeTracing } from '../../src/tracing/tracing.ts';
import { signedInAgent } from '../helpers/web.ts';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;
const INCOMING_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const COMPLETION_TRACE = '0af7651916cd43dd8448eb211c80319c';

function traceOf(header: unknown): { traceId: string; parentId: string; flags: string } {
  const match = TRACEPARENT.exec(String(header));
  assert.ok(match, `a traceparent: ${String(header)}`);
  return { traceId: match[1]!, parentId: match[2]!, flags: String(header).slice(-2) };
}

describe('trace context, export off', () => {
  let rig: DeliveryRig;
  let t: TestApp;
  let target: HttpsTarget;

  before(async () => {
    rig = await startDeliveryRig({ listen: true });
    ({ t, target } = rig);
  });
  after(() => rig.close());

  test('export is off: no tracing is active', () => {
    assert.equal(activeTracing(), undefined);
  });

  test("POST /calls's traceparent and tracestate reach every attempt, each with a parent id of its own; the attempt log shows the trace id", async () => {
    const path = '/traced';
    let seen = 0;
    target.respond((request) => (request.url === path && ++seen <= 2 ? { status: 503 } : { status: 200 }));
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `${target.url}${path}` });
    const res = await t.app.inject({
      method: 'POST',
      url: '/calls',
      headers: {
        'x-user-token': org.member.token,
        traceparent: `00-${INCOMING_TRACE}-00f067aa0ba902b7-01`,
        tracestate: 'vendor=abc,other=x1',
      },
      payload: { summary: 'Traced call', duration_seconds: 3 },
    });
    assert.equal(res.statusCode, 201);
    await settled(t, hook.id, 1);
    const attempts = target.requests.filter((request) => request.url === path);
    assert.equal(attempts.length, 3, 'two 503s, then the answer');
    const traces = attempts.map((request) => traceOf(request.headers.traceparent));
    assert.deepEqual(
      traces.map((trace) => trace.traceId),
      [INCOMING_TRACE, INCOMING_TRACE, INCOMING_TRACE],
    );
    assert.deepEqual(
      traces.map((trace) => trace.flags),
      ['01', '01', '01'],
      "the caller's sampled flag",
    );
    const parents = new Set(traces.map((trace) => trace.parentId));
    assert.equal(parents.size, 3, 'a parent id per attempt');
    assert.ok(!parents.has('00f067aa0ba902b7'), "an attempt's own, not the caller's span");
    for (const request of attempts) assert.equal(request.headers.tracestate, 'vendor=abc,other=x1');

    const log = await t.app.inject({ url: `/webhooks/${hook.id}/deliveries`, headers: { 'x-user-token': org.member.token } });
    assert.equal(log.statusCode, 200);
    assert.deepEqual(
      log.json().map((attempt: { trace_id: string }) => attempt.trace_id),
      [INCOMING_TRACE, INCOMING_TRACE, INCOMING_TRACE],
    );
    // The subscription's page shows it on each attempt.
    const agent = await signedInAgent(t.url, org.member.email);
    const page = await agent.get(`/ui/webhooks/${hook.id}`);
    assert.equal(page.status, 200);
    assert.equal(page.body.split(`trace <code>${INCOMING_TRACE}</code>`).length - 1, 3, 'the trace id on each of the three attempts');
  });

  test('a call without a traceparent (or with a malformed one) gets a new trace id at the request, sent on its attempt', async () => {
    const org = await connectPlatform(t);
    const path = '/untraced';
    const hook = await subscribeHook(t, org, { hookUrl: `${target.url}${path}` });
    for (const traceparent of [undefined, '00-00000000000000000000000000000000-00f067aa0ba902b7-01', 'garbage']) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/calls',
        headers: { 'x-user-token': org.member.token, ...(traceparent ? { traceparent } : {}) },
        payload: { summary: 'Untraced call', duration_seconds: 3 },
      });
      assert.equal(res.statusCode, 201, 'a malformed traceparent is not an error of the request');
    }
    await settled(t, hook.id, 3);
    const attempts = target.requests.filter((request) => request.url === path);
    assert.equal(attempts.length, 3);
    const traceIds = new Set(attempts.map((request) => traceOf(request.headers.traceparent).traceId));
    assert.equal(traceIds.size, 3, 'a trace per call');
    assert.ok(!traceIds.has('0'.repeat(32)));
    for (const request of attempts) assert.equal(request.headers.tracestate, undefined);
    const log = await t.app.inject({ url: `/webhooks/${hook.id}/deliveries`, headers: { 'x-user-token': org.member.token } });
    assert.deepEqual(new Set(log.json().map((attempt: { trace_id: string }) => attempt.trace_id)), traceIds);
  });

  test("the completion's traceparent wins over the creation's; without one the creation's stays", async () => {
    const org = await connectPlatform(t);
    const path = '/completed';
    const hook = await subscribeHook(t, org, { hookUrl: `${target.url}${path}` });
    const headers = { 'x-user-token': org.member.token };
    const create = (traceparent: string) =>
      t.app
        .inject({ method: 'POST', url: '/calls', headers: { ...headers, traceparent }, payload: {} })
        .then((res) => res.json().id as string);
    const both = await create(`00-${INCOMING_TRACE}-00f067aa0ba902b7-01`);
    const creationOnly = await create(`00-${INCOMING_TRACE}-00f067aa0ba902b7-00`);
    const complete = (id: string, extra: Record<string, string>) =>
      t.app.inject({
        method: 'POST',
        url: `/calls/${id}/complete`,
        headers: { ...headers, ...extra },
        payload: { summary: 'Done', duration_seconds: 1 },
      });
    assert.equal((await complete(both, { traceparent: `00-${COMPLETION_TRACE}-b7ad6b7169203331-01` })).statusCode, 200);
    await settled(t, hook.id, 1);
    assert.equal((await complete(creationOnly, {})).statusCode, 200);
    await settled(t, hook.id, 2);
    const attempts = target.requests.filter((request) => request.url === path).map((request) => traceOf(request.headers.traceparent));
    assert.deepEqual(
      attempts.map((trace) => [trace.traceId, trace.flags]),
      [
        [COMPLETION_TRACE, '01'],
        [INCOMING_TRACE, '00'],
      ],
    );
  });
});
