import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { jitter } from '../../../src/tasks/jitter.ts';
import {
  decide,
  leaseMsFor,
  parseRetryAfter,
  RETRY_AFTER_CAP_MS,
  RETRY_AFTER_FLOOR_MS,
  type AttemptResult,
  type Decision,
} from '../../../src/webhooks/worker/retry-policy.ts';

const schedule = [10_000, 60_000, 300_000];
const now = new Date('2026-01-01T00:00:00Z');
const middle = () => 0.5; // no jitter
const response = (status: number, retryAfter?: string): AttemptResult => ({
  kind: 'response',
  status,
  bodyExcerpt: '',
  latencyMs: 5,
  ...(retryAfter !== undefined ? { retryAfter } : {}),
});
const error = (kind: 'timeout' | 'connection' | 'tls' | 'blocked_address' | 'invalid_url'): AttemptResult => ({
  kind: 'error',
  error: kind,
  message: kind,
  latencyMs: 5,
});
const run = (result: AttemptResult, attemptInSchedule = 1): Decision =>
  decide(result, { attemptInSchedule, scheduleMs: schedule, now, random: middle });

describe('retry policy', () => {
  const cases: [string, AttemptResult, number, Decision][] = [
    ['200 succeeds', response(200), 1, { outcome: 'succeeded' }],
    ['204 succeeds', response(204), 1, { outcome: 'succeeded' }],
    ['299 succeeds', response(299), 1, { outcome: 'succeeded' }],
    ['410 removes the subscription', response(410), 1, { outcome: 'subscription_removed' }],
    ['410 removes it even on the last attempt', response(410), 4, { outcome: 'subscription_removed' }],
    ['500 retries on the first delay', response(500), 1, { outcome: 'retrying', delayMs: 10_000 }],
    ['500 retries on the second delay', response(500), 2, { outcome: 'retrying', delayMs: 60_000 }],
    ['500 after the last delay fails', response(500), 4, { outcome: 'failed' }],
    ['302 is a failure, retried', response(302), 1, { outcome: 'retrying', delayMs: 10_000 }],
    ['301 is a failure, retried', response(301), 3, { outcome: 'retrying', delayMs: 300_000 }],
    ['400 is retried like any failure', response(400), 1, { outcome: 'retrying', delayMs: 10_000 }],
    ['404 is retried', response(404), 1, { outcome: 'retrying', delayMs: 10_000 }],
    ['100-class answers are failures', response(199), 1, { outcome: 'retrying', delayMs: 10_000 }],
    ['a time-out retries', error('timeout'), 1, { outcome: 'retrying', delayMs: 10_000 }],
    ['a connection error retries', error('connection'), 2, { outcome: 'retrying', delayMs: 60_000 }],
    ['a TLS error retries', error('tls'), 1, { outcome: 'retrying', delayMs: 10_000 }],
    ['a blocked address retries (DNS may change back)', error('blocked_address'), 1, { outcome: 'retrying', delayMs: 10_000 }],
    ['a time-out on the last attempt fails', error('timeout'), 4, { outcome: 'failed' }],
    ['429 with Retry-After seconds waits that long', response(429, '120'), 1, { outcome: 'retrying', delayMs: 120_000 }],
    ['503 with Retry-After seconds waits that long', response(503, '7'), 2, { outcome: 'retrying', delayMs: 7_000 }],
    [
      '429 with an HTTP-date waits until then',
      response(429, 'Thu, 01 Jan 2026 00:05:00 GMT'),
      1,
      { outcome: 'retrying', delayMs: 300_000 },
    ],
    ['Retry-After is capped', response(429, '999999'), 1, { outcome: 'retrying', delayMs: RETRY_AFTER_CAP_MS }],
    ['Retry-After 0 still waits the floor', response(503, '0'), 1, { outcome: 'retrying', delayMs: RETRY_AFTER_FLOOR_MS }],
    [
      'a past HTTP-date waits the floor',
      response(503, 'Wed, 31 Dec 2025 00:00:00 GMT'),
      1,
      { outcome: 'retrying', delayMs: RETRY_AFTER_FLOOR_MS },
    ],
    ['429 without Retry-After uses the schedule', response(429), 1, { outcome: 'retrying', delayMs: 10_000 }],
    ['429 with garbage Retry-After uses the schedule', response(429, 'soon'), 1, { outcome: 'retrying', delayMs: 10_000 }],
    ['Retry-After on another status is ignored', response(500, '120'), 1, { outcome: 'retrying', delayMs: 10_000 }],
    ['429 on the last attempt fails despite Retry-After', response(429, '5'), 4, { outcome: 'failed' }],
  ];
  for (const [name, result, attempt, expected] of cases) {
    test(name, () => assert.deepEqual(run(result, attempt), expected));
  }

  test('an empty schedule allows exactly one attempt', () => {
    assert.deepEqual(decide(response(500), { attemptInSchedule: 1, scheduleMs: [], now, random: middle }), { outcome: 'failed' });
  });

  test('jitter stays within ±10 % and spreads', () => {
    assert.equal(Math.round(jitter(10_000, () => 0)), 9_000);
    assert.equal(Math.round(jitter(10_000, () => 0.999999)), 11_000);
    assert.equal(Math.round(jitter(10_000, () => 0.5)), 10_000);
    const values = [0.1, 0.3, 0.7, 0.9].map((r) => {
      const decision = decide(response(500), { attemptInSchedule: 1, scheduleMs: schedule, now, random: () => r });
      return decision.outcome === 'retrying' ? decision.delayMs : NaN;
    });
    assert.ok(
      values.every((v) => v >= 9_000 && v <= 11_000),
      String(values),
    );
    assert.equal(new Set(values).size, 4);
  });

  test('Retry-After parsing', () => {
    assert.equal(parseRetryAfter(undefined, now), undefined);
    assert.equal(parseRetryAfter(' 30 ', now), 30_000);
    assert.equal(parseRetryAfter('-5', now), undefined);
    assert.equal(parseRetryAfter('1.5', now), undefined);
    assert.equal(parseRetryAfter('Thu, 01 Jan 2026 00:00:10 GMT', now), 10_000);
  });

  test('the lease outlasts the attempt time-out with room to record', () => {
    assert.equal(leaseMsFor(10_000), 15_000);
    assert.equal(leaseMsFor(1_000), 3_000);
    assert.ok(
      leaseMsFor(120_000) < 2 * 60_000 + 60_000 + 1,
      "a dead worker's delivery is retried within about two minutes at the largest time-out",
    );
  });
});
