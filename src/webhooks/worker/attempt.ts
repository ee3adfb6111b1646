// One attempt of one claimed delivery: build the request, send it, decide
// what the result means, hand the outcome to the recorder. The request may
// leave while the claim's COMMIT is still on its way (the rows are locked by
// the claim's open transaction meanwhile); the outcome is written only once
// that commit has succeeded, by the recorder in a later statement (batched
// with other attempts' outcomes), guarded by the lease. If the commit fails
// the lease never existed: the request is cut, nothing is recorded, and the
// delivery, still pending, is sent again later with the same X-Delivery-Id.
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Pool } from '../../db/pool.ts';
import type { Metrics } from '../../metrics/metrics.ts';
import type { SecretBox } from '../../crypto/secret-box.ts';
import type { LeasedDelivery } from './claim.queries.ts';
import { deliver } from './deliver.ts';
import { endpointHealth, healthPolicy } from './endpoint-health.ts';
import { returnUnsentLeases } from './hand-back.queries.ts';
import type { AttemptOutcome, DeliveryState, OutcomeRecord, RecordedOutcome } from './record.queries.ts';
import { createOutcomeRecorder, type OutcomeRecorder } from './recorder.ts';
import { decide, type AttemptResult, type Decision } from './retry-policy.ts';
import { deliveryHeaders, type DeliveryHeadersInput } from './request.ts';
import { startAttemptTrace, type AttemptTrace, type AttemptTraceResult } from './attempt-trace.ts';

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
  /** The worker's statement deadline (worker.ts statementDeadlineMs); unset: none. */
  statementDeadlineMs?: number;
}

async function send(deps: AttemptDeps, claimed: LeasedDelivery, signal: AbortSignal, trace: AttemptTrace): Promise<AttemptResult> {
  let secret: DeliveryHeadersInput['secret'];
  try {
    secret = claimed.secret_ciphertext
      ? { text: deps.secretBox.open(claimed.secret_ciphertext, claimed.organization_id), format: claimed.secret_format }
      : undefined;
  } catch {
    // Never send an unsigned request for a subscription that asked for a signature.
    return {
      kind: 'error',
      error: 'internal',
      message:
        'the subscription secret opens under neither SECRET_KEY nor SECRET_KEY_PREVIOUS (was SECRET_KEY changed, or DATA_DIR/secret.key lost?): ' +
        'put the key it was sealed under in SECRET_KEY_PREVIOUS (docs/operations.md, "Rotating SECRET_KEY")',
      latencyMs: 0,
    };
  }
  const headers = deliveryHeaders({
    deliveryId: claimed.id,
    attempt: claimed.attempt,
    event: claimed.event,
    body: claimed.body,
    secret,
    timestamp: Math.floor(Date.now() / 1000),
    traceparent: trace.traceparent,
    tracestate: trace.tracestate,
  });
  return deliver({
    url: claimed.callback_url,
    body: claimed.body,
    headers,
    timeoutMs: deps.timeoutMs,
    allowPrivate: deps.allowPrivate,
    allowedPorts: deps.allowedPorts,
    signal,
  });
}

function outcomeRecord(claimed: LeasedDelivery, attemptedAt: Date, result: AttemptResult, decision: Decision, now: number): OutcomeRecord {
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
    health: endpointHealth(result),
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

/** An attempt's metrics and log line. */
function report(deps: AttemptDeps, claimed: LeasedDelivery, result: AttemptResult, outcome: AttemptOutcome): void {
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
}

export interface AttemptClaim {
  /** Writes the outcome, batched with other attempts' (the worker's); unset: a recorder of its own. */
  recorder?: OutcomeRecorder;
  /** The claim's commit (Claim.committed): the lease exists once it resolves. Unset: committed already. */
  committed?: Promise<unknown>;
}

/**
 * `leaseDeadline` is when (on performance.now()'s clock) the lease runs out at
 * the latest. An attempt that could outlive it is not sent at all: another
 * worker could claim the delivery meanwhile and send the same attempt again.
 * Resolves to when its subscription has work due again that this attempt
 * knows of (its retry, a claim given back, the end of the wait of a circuit it
 * opened), so the worker can look for it then; else null (also when the claim
 * did not commit: the worker looks again after that failure).
 */
export async function attemptDelivery(
  deps: AttemptDeps,
  claimed: LeasedDelivery,
  leaseDeadline: number,
  claim: AttemptClaim = {},
): Promise<Date | null> {
  const committed = claim.committed ?? Promise.resolve();
  // The same rule as the deadline: no attempt outlives its lease, and a lease
  // whose commit failed never existed, so its attempt is cut at once.
  const lease = new AbortController();
  const held = committed.then(
    () => true,
    (error: unknown) => {
      lease.abort(error);
      return false;
    },
  );
  if (performance.now() + deps.timeoutMs + RECORD_MARGIN_MS > leaseDeadline) {
    if (!(await held)) return null;
    deps.log.warn({ delivery_id: claimed.id }, 'webhook delivery claim too old to send safely; returned unsent');
    await returnUnsentLeases(deps.pool, [{ id: claimed.id, leaseToken: claimed.lease_token }], deps.statementDeadlineMs);
    return new Date();
  }
  const attemptedAt = new Date();
  const trace = startAttemptTrace(claimed);
  let traced: AttemptTraceResult = { outcome: 'not_recorded' };
  let result: AttemptResult;
  let decision: Decision;
  let record: OutcomeRecord;
  let recorded: RecordedOutcome;
  try {
    result = await send(deps, claimed, lease.signal, trace);
    traced = {
      outcome: 'not_recorded',
      statusCode: result.kind === 'response' ? result.status : undefined,
      error: result.kind === 'error' ? result.error : undefined,
    };
    // The claim never committed: no lease covered this attempt.
    if (!(await held)) return null;
    decision = decide(result, {
      attemptInSchedule: claimed.attempt - claimed.schedule_start,
      scheduleMs: deps.retryScheduleMs,
      now: new Date(),
      random: deps.random ?? Math.random,
    });
    record = outcomeRecord(claimed, attemptedAt, result, decision, Date.now());
    const recorder = claim.recorder ?? createOutcomeRecorder(deps.pool, { policy: healthPolicy(deps.retryScheduleMs) });
    recorded = await trace.run(() => recorder.record(record));
    traced.outcome = recorded.dropped ? 'dropped' : recorded.held ? decision.outcome : 'superseded';
  } finally {
    trace.end(traced);
  }
  if (recorded.dropped) {
    // Its subscription was deleted (unsubscribed, 410, client removed) while the attempt ran:
    // there is nothing left to record it against, and nothing to retry.
    deps.metrics.outcomesDropped.inc();
    deps.log.debug(
      { delivery_id: claimed.id, subscription_id: claimed.subscription_id, attempt: claimed.attempt, outcome: decision.outcome },
      'webhook delivery attempt dropped: its delivery or subscription is gone',
    );
    return null;
  }
  if (recorded.disabledNow)
    deps.log.warn({ subscription_id: claimed.subscription_id }, 'webhook subscription disabled after five days of failures');
  trace.run(() => report(deps, claimed, result, recorded.held ? decision.outcome : 'superseded'));
  // When its subscription has work again: this delivery's retry, or the end of a circuit it opened, whichever is later.
  const retryAt = recorded.held && record.status === 'pending' ? record.nextAttemptAt : null;
  const circuitAt = recorded.circuitRetryAt;
  // biome-ignore lint/complexity/useMathMinMax: Dates; Math.max would return a number.
  if (retryAt && circuitAt) return retryAt > circuitAt ? retryAt : circuitAt;
  return retryAt ?? circuitAt;
}
