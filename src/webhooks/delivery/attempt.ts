// One attempt of one claimed delivery: build the request, send it, decide
// what the result means, hand the outcome to the recorder. The claim's
// transaction is long committed; the outcome is written by the recorder in a
// later statement (batched with other attempts' outcomes), guarded by the lease.
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Pool } from '../../db/pool.ts';
import type { Metrics } from '../../metrics/metrics.ts';
import type { SecretBox } from '../secret-box.ts';
import type { ClaimedDelivery } from './claim.queries.ts';
import { deliver } from './deliver.ts';
import { returnUnsentClaims, type AttemptOutcome, type DeliveryState, type OutcomeRecord } from './record.queries.ts';
import { createOutcomeRecorder, type OutcomeRecorder } from './recorder.ts';
import { decide, type AttemptResult, type Decision } from './retry-policy.ts';
import { deliveryHeaders } from './request.ts';

/** Time an attempt must still have on its lease after its own time-out, to record the outcome. */
export const RECORD_MARGIN_MS = 1000;

export interface AttemptDeps {
  pool: Pool;
  secretBox: SecretBox;
  metrics: Metrics;
  log: Logger;
  timeoutMs: number;
  allowPrivate: boolean;
  allowedPorts: readonly number[] | '*';
  retryScheduleMs: readonly number[];
  random?: () => number;
}

async function send(deps: AttemptDeps, claimed: ClaimedDelivery): Promise<AttemptResult> {
  let secret: string | undefined;
  try {
    secret = claimed.secret_ciphertext ? deps.secretBox.open(claimed.secret_ciphertext, claimed.organization_id) : undefined;
  } catch {
    // Never send an unsigned request for a subscription that asked for a signature.
    return { kind: 'error', error: 'internal', message: 'the subscription secret could not be decrypted (was SECRET_KEY changed?)', latencyMs: 0 };
  }
  const headers = deliveryHeaders({
    deliveryId: claimed.id,
    attempt: claimed.attempt,
    event: claimed.event,
    body: claimed.body,
    secret,
    timestamp: Math.floor(Date.now() / 1000),
  });
  return deliver({ url: claimed.callback_url, body: claimed.body, headers, timeoutMs: deps.timeoutMs, allowPrivate: deps.allowPrivate,
    allowedPorts: deps.allowedPorts });
}

function outcomeRecord(claimed: ClaimedDelivery, attemptedAt: Date, result: AttemptResult, decision: Decision, now: number): OutcomeRecord {
  return {
    ...deliveryState(decision, now),
    leaseToken: claimed.lease_token,
    deliveryId: claimed.id,
    attempt: claimed.attempt,
    attemptedAt,
    statusCode: result.kind === 'response' ? result.status : null,
    latencyMs: result.latencyMs,
    error: result.kind === 'error' ? result.error : null,
    errorMessage: result.kind === 'error' ? result.message.slice(0, 1000) : null,
    responseBody: result.kind === 'response' ? result.bodyExcerpt : null,
    outcome: decision.outcome,
  };
}

function deliveryState(decision: Decision, now: number): { status: DeliveryState; nextAttemptAt: Date | null } {
  switch (decision.outcome) {
    case 'succeeded':
      return { status: 'succeeded', nextAttemptAt: null };
    case 'retrying':
      return { status: 'pending', nextAttemptAt: new Date(now + decision.delayMs) };
    case 'failed':
    case 'subscription_removed':
      return { status: 'failed', nextAttemptAt: null };
  }
}

/**
 * `leaseDeadline` is when (on performance.now()'s clock) the lease runs out at
 * the latest. An attempt that could outlive it is not sent at all: another
 * worker could claim the delivery meanwhile and send the same attempt again.
 * Resolves to when the delivery is due again if it stays pending (a retry,
 * or a claim given back), so the worker can look for it then; else null.
 */
export async function attemptDelivery(
  deps: AttemptDeps,
  claimed: ClaimedDelivery,
  leaseDeadline: number,
  recorder: OutcomeRecorder = createOutcomeRecorder(deps.pool),
): Promise<Date | null> {
  if (performance.now() + deps.timeoutMs + RECORD_MARGIN_MS > leaseDeadline) {
    deps.log.warn({ delivery_id: claimed.id }, 'webhook delivery claim too old to send safely; returned unsent');
    await returnUnsentClaims(deps.pool, [{ id: claimed.id, leaseToken: claimed.lease_token }]);
    return new Date();
  }
  const attemptedAt = new Date();
  const result = await send(deps, claimed);
  const decision = decide(result, {
    attemptInSchedule: claimed.attempt - claimed.schedule_start,
    scheduleMs: deps.retryScheduleMs,
    now: new Date(),
    random: deps.random ?? Math.random,
  });
  const record = outcomeRecord(claimed, attemptedAt, result, decision, Date.now());
  const recorded = await recorder.record(record);
  const outcome: AttemptOutcome = recorded.held ? decision.outcome : 'superseded';
  if (recorded.disabledNow) deps.log.warn({ subscription_id: claimed.subscription_id }, 'webhook subscription disabled after five days of failures');
  deps.metrics.deliveries.inc({ outcome });
  deps.metrics.deliveryLatency.observe({ outcome }, result.latencyMs / 1000);
  deps.log.info(
    {
      delivery_id: claimed.id,
      subscription_id: claimed.subscription_id,
      attempt: claimed.attempt,
      status: result.kind === 'response' ? result.status : undefined,
      error: result.kind === 'error' ? result.error : undefined,
      latency_ms: result.latencyMs,
      outcome,
    },
    'webhook delivery attempt',
  );
  return recorded.held && record.status === 'pending' ? record.nextAttemptAt : null;
}
