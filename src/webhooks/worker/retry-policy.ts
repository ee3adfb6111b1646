// What one attempt's result means (docs/interface.md §6.3), as pure functions:
//
//   2xx                          → succeeded; the delivery is done.
//   410 Gone                     → subscription_removed; the subscription is deleted, nothing more is sent.
//   429 or 503 with Retry-After  → retrying after Retry-After (at most RETRY_AFTER_CAP_MS, at least
//                                  RETRY_AFTER_FLOOR_MS) instead of the scheduled delay, if the
//                                  schedule has an attempt left; otherwise failed.
//   anything else                → retrying after the next WEBHOOK_RETRY_SCHEDULE delay ±10 %,
//                                  after the last one failed. "Anything else" is every other
//                                  status (3xx included: redirects are never followed), a
//                                  time-out, a connection, TLS or address error, or a fault of
//                                  ours before sending (an undecryptable secret).
//
// Attempts are counted from the start of the current schedule (a manual
// redelivery starts a new one). A schedule of n delays allows n + 1 attempts.
import { jitter } from '../../tasks/jitter.ts';
import type { DeliveryOutcome } from './deliver.ts';

/** What an attempt produced: the target's answer or a transport error, or a fault of ours before sending. */
export type AttemptResult = DeliveryOutcome | { kind: 'error'; error: 'internal'; message: string; latencyMs: number };

export const RETRY_AFTER_CAP_MS = 60 * 60 * 1000;
export const RETRY_AFTER_FLOOR_MS = 1000;
export const JITTER = 0.1;
/** A subscription whose attempts have only failed for this long is disabled. */
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * 60 * 60 * 1000;

export type Decision =
  | { outcome: 'succeeded' }
  | { outcome: 'subscription_removed' }
  | { outcome: 'retrying'; delayMs: number }
  | { outcome: 'failed' };

export interface DecideInput {
  /** Attempts made in the current schedule, this one included (1 for the first). */
  attemptInSchedule: number;
  scheduleMs: readonly number[];
  now: Date;
  /** A number in [0, 1): Math.random in production, fixed in tests. */
  random: () => number;
}

export function isSuccess(result: AttemptResult): boolean {
  return result.kind === 'response' && result.status >= 200 && result.status < 300;
}

/** `delayMs` moved by up to ±JITTER, in whole ms, so retries of many deliveries failing together spread out. */
function retryDelayMs(delayMs: number, random: () => number): number {
  return Math.max(0, Math.round(jitter(delayMs, random, JITTER)));
}

/** Retry-After as delta-seconds or an HTTP-date (RFC 9110 §10.2.3), in milliseconds from now; undefined if unusable. */
export function parseRetryAfter(value: string | undefined, now: Date): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now.getTime());
}

export function decide(result: AttemptResult, input: DecideInput): Decision {
  if (isSuccess(result)) return { outcome: 'succeeded' };
  if (result.kind === 'response' && result.status === 410) return { outcome: 'subscription_removed' };
  const retriesUsed = input.attemptInSchedule - 1;
  if (retriesUsed >= input.scheduleMs.length) return { outcome: 'failed' };
  if (result.kind === 'response' && (result.status === 429 || result.status === 503)) {
    const asked = parseRetryAfter(result.retryAfter, input.now);
    if (asked !== undefined) {
      return { outcome: 'retrying', delayMs: Math.min(RETRY_AFTER_CAP_MS, Math.max(RETRY_AFTER_FLOOR_MS, asked)) };
    }
  }
  return { outcome: 'retrying', delayMs: retryDelayMs(input.scheduleMs[retriesUsed]!, input.random) };
}

/** The lease a worker takes on a delivery: the whole attempt plus room to record its outcome. */
export function leaseMsFor(webhookTimeoutMs: number): number {
  return webhookTimeoutMs + Math.max(2000, Math.round(webhookTimeoutMs / 2));
}
