// A worker's slots, counted as attempts start and end (no database).
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { createInFlight, type InFlight, type RunningLease } from '../../../src/webhooks/worker/in-flight.ts';

let n = 0;
const claim = (subscriptionId: string, over: Partial<RunningLease> = {}): RunningLease => ({
  id: `d${++n}`,
  leaseToken: `t${n}`,
  subscriptionId,
  cap: 2,
  degraded: false,
  ...over,
});

const open: InFlight[] = [];
function slots(options: { concurrency?: number; degradedShare?: number; slowAfterMs?: number; turnedSlow?: (over: boolean) => void } = {}) {
  const inFlight = createInFlight({
    concurrency: options.concurrency ?? 10,
    degradedShare: options.degradedShare ?? 2,
    slowAfterMs: options.slowAfterMs ?? 60_000,
    turnedSlow: options.turnedSlow ?? (() => {}),
  });
  open.push(inFlight);
  return inFlight;
}
afterEach(() => {
  for (const inFlight of open.splice(0)) for (const running of inFlight.leases()) inFlight.end(running.id);
});

describe('in-flight attempts', () => {
  test('a subscription is at its cap while this worker runs as many of its attempts as the smallest cap they were claimed under', () => {
    const inFlight = slots();
    const a = claim('s1', { cap: 3 });
    const b = claim('s1', { cap: 2 });
    inFlight.start(a);
    assert.equal(inFlight.atCap('s1'), false);
    inFlight.start(b);
    assert.equal(inFlight.atCap('s1'), true);
    assert.equal(inFlight.atCap('s2'), false);
    inFlight.end(b.id);
    assert.equal(inFlight.atCap('s1'), false, 'the cap of the attempt that ended no longer counts');
    inFlight.end(a.id);
    assert.equal(inFlight.atCap('s1'), false);
    inFlight.end(a.id);
    assert.equal(inFlight.size(), 0, 'an attempt ends once');
  });

  test('free slots: degraded endpoints hold at most the degraded share', () => {
    const inFlight = slots({ concurrency: 10, degradedShare: 2 });
    assert.deepEqual(inFlight.free(), { limit: 10, degradedLimit: 2 });
    inFlight.start(claim('fast'));
    inFlight.start(claim('slow', { degraded: true }));
    assert.deepEqual(inFlight.free(), { limit: 8, degradedLimit: 1 });
    inFlight.start(claim('slow', { degraded: true }));
    inFlight.start(claim('other', { degraded: true }));
    // Past the share, a slow attempt no longer takes a healthy endpoint's slot.
    assert.deepEqual(inFlight.free(), { limit: 7, degradedLimit: 0 });
    assert.deepEqual(inFlight.degradedSubscriptions().sort(), ['other', 'slow']);
  });

  test('an attempt still running after slowAfterMs turns slow, and says when the share is over full', async () => {
    const turned: boolean[] = [];
    const inFlight = slots({ concurrency: 4, degradedShare: 1, slowAfterMs: 20, turnedSlow: (over) => turned.push(over) });
    const first = claim('s1');
    inFlight.start(first);
    inFlight.start(claim('s2'));
    const ended = claim('s3');
    inFlight.start(ended);
    inFlight.end(ended.id);
    await new Promise((resolve) => setTimeout(resolve, 80));
    assert.deepEqual(turned, [false, true], 'two turned, the second past the share; the ended one never');
    assert.deepEqual(inFlight.degradedSubscriptions().sort(), ['s1', 's2']);
    assert.deepEqual(inFlight.free(), { limit: 3, degradedLimit: 0 });
    inFlight.end(first.id);
    assert.deepEqual(inFlight.degradedSubscriptions(), ['s2']);
    assert.deepEqual(inFlight.free(), { limit: 3, degradedLimit: 0 });
  });

  test('the running claims are what a stop hands back', () => {
    const inFlight = slots();
    const a = claim('s1');
    inFlight.start(a);
    assert.deepEqual(
      inFlight.leases().map((c) => [c.id, c.leaseToken]),
      [[a.id, a.leaseToken]],
    );
  });
});
