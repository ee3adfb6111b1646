// What one attempt says about its endpoint's health, and the limits that
// keep a broken endpoint from delaying anyone else's deliveries
// (docs/decisions.md, "One endpoint's health"):
//
//   adaptive concurrency  an unhealthy attempt cuts its subscription to one
//                         attempt in flight; each healthy answer allows one
//                         more, up to MAX_IN_FLIGHT_PER_SUBSCRIPTION.
//   circuit breaker       BREAKER_THRESHOLD unhealthy attempts in a row open
//                         the circuit: nothing is sent until the wait (the
//                         retry schedule, one step further per reopening) is
//                         over, then one probe at a time; a healthy answer closes it.
//   degraded share        attempts to degraded endpoints (never answered in
//                         time yet, circuit open or probing, a failure since
//                         the last healthy answer, a slow last answer, or an
//                         attempt in flight longer than SLOW_ATTEMPT_MS,
//                         SLOW_LEASE_MS in another worker) hold at most
//                         DEGRADED_SHARE of a worker's slots, so the others
//                         always find one free. A new endpoint proves itself
//                         first: hundreds of new subscriptions whose endpoints
//                         hang would otherwise each take a healthy slot until
//                         their first attempt timed out.
//
// The counting itself runs in the database, in the statement that records
// outcomes (app_endpoint_health_after), so that every worker
// process shares one state per subscription. This module says which attempts
// count as what, and with which limits.
import type { AttemptResult } from './retry-policy.ts';

/** Attempts per subscription in flight at once, across all workers, when its endpoint is healthy. */
export const MAX_IN_FLIGHT_PER_SUBSCRIPTION = 10;
/** Unhealthy attempts in a row that open a subscription's circuit. */
export const BREAKER_THRESHOLD = 5;
/** An answer slower than this is slow (webhook_subscriptions.slow: the last one was); an attempt running longer is slow while it runs. */
export const SLOW_ATTEMPT_MS = 1000;
/**
 * Another worker's attempt counts as slow once its lease is this old. The
 * lease's age also holds the claim's commit and the outcome's write, which a
 * busy database stretches: a margin keeps a healthy endpoint out of the
 * degraded share.
 */
export const SLOW_LEASE_MS = 3 * SLOW_ATTEMPT_MS;
/** The share of a worker's slots that degraded endpoints may hold. */
export const DEGRADED_SHARE = 0.25;

/**
 * `healthy`: answered in time (any 2xx, 3xx or 4xx other than 429: the endpoint
 * works, whatever it thought of the request); `slow`: the same, but slower than
 * SLOW_ATTEMPT_MS; `unhealthy`: timed out, could not connect, failed TLS, or
 * answered 429 or 5xx; `none`: the attempt says nothing about the endpoint
 * (refused by our own address or port checks, or a fault of ours before sending).
 */
export type EndpointHealth = 'healthy' | 'slow' | 'unhealthy' | 'none';

export function endpointHealth(result: AttemptResult): EndpointHealth {
  if (result.kind === 'error') {
    return result.error === 'timeout' || result.error === 'connection' || result.error === 'tls' ? 'unhealthy' : 'none';
  }
  if (result.status === 429 || result.status >= 500) return 'unhealthy';
  return result.latencyMs > SLOW_ATTEMPT_MS ? 'slow' : 'healthy';
}

/** How many of a worker's `concurrency` slots degraded endpoints may hold (at least one). */
export function degradedSlots(concurrency: number): number {
  return Math.max(1, Math.floor(concurrency * DEGRADED_SHARE));
}

/** What the recorder needs to apply the rules above. */
export interface HealthPolicy {
  maxInFlight: number;
  breakerThreshold: number;
  /** The waits of an open circuit: the n-th opening in a row waits the n-th (the last one after that). */
  breakerWaitsMs: readonly number[];
}

export function healthPolicy(retryScheduleMs: readonly number[]): HealthPolicy {
  return {
    maxInFlight: MAX_IN_FLIGHT_PER_SUBSCRIPTION,
    breakerThreshold: BREAKER_THRESHOLD,
    breakerWaitsMs: retryScheduleMs.length > 0 ? retryScheduleMs : [60_000],
  };
}
