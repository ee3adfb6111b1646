// Recording an attempt's outcome (system queries, owner role). Only the
// holder of the delivery's current lease may change the delivery; an attempt
// is logged either way, because it happened on the wire. The statement, and
// what it does in which order, is record_outcomes (record-outcomes.queries.ts).
import { valuesOf } from '../../db/named-statement.ts';
import type { DeadlineQueryConfig, Queryable } from '../../db/pool.ts';
import type { EndpointHealth, HealthPolicy } from './endpoint-health.ts';
import { RECORD_OUTCOMES, type RecordedRow } from './record-outcomes.queries.ts';

export type AttemptOutcome = 'succeeded' | 'retrying' | 'failed' | 'subscription_removed' | 'superseded';
export type AttemptError =
  | 'timeout'
  | 'connection'
  | 'tls'
  | 'blocked_address'
  | 'blocked_port'
  | 'invalid_url'
  | 'lease_expired'
  | 'internal';

export interface AttemptRecord {
  deliveryId: string;
  attempt: number;
  attemptedAt: Date;
  statusCode: number | null;
  latencyMs: number | null;
  error: AttemptError | null;
  errorMessage: string | null;
  responseBody: string | null;
  outcome: AttemptOutcome;
}

export type DeliveryState = 'pending' | 'succeeded' | 'failed';

/** One attempt's outcome, to be recorded under the lease it was sent with. */
export interface OutcomeRecord extends AttemptRecord {
  leaseToken: string;
  /** The delivery's new state if the lease is still held. */
  status: DeliveryState;
  /** The next attempt's time when retrying. */
  nextAttemptAt: Date | null;
  /** What the attempt says about its endpoint (endpoint-health.ts). */
  health: EndpointHealth;
}

export interface RecordedOutcome {
  deliveryId: string;
  /** False when the lease was lost (the attempt was logged as superseded, nothing else changed) or the outcome was dropped. */
  held: boolean;
  subscriptionId: string | null;
  /** This record disabled the subscription (five days of only failures). */
  disabledNow: boolean;
  /** The subscription's circuit is open until then (as this batch left it), if it changed in this batch. */
  circuitRetryAt: Date | null;
  /** The delivery or its subscription is gone (or being deleted): nothing was written for this attempt. */
  dropped: boolean;
}

/** What recordOutcomes records, and under which rules. */
export interface OutcomeBatch {
  records: readonly OutcomeRecord[];
  /** A subscription whose attempts have only failed for this long is disabled (retry-policy.ts DISABLE_AFTER_FAILING_MS). */
  disableAfterMs: number;
  /** The endpoint-health limits (endpoint-health.ts). */
  policy: HealthPolicy;
  /** The statement fails after this long without an answer (claim.queries.ts, deadlineMs); unset: no deadline. */
  deadlineMs?: number | undefined;
}

/** Records a batch of outcomes in one statement (record_outcomes): one round trip under one deadline. */
export async function recordOutcomes(db: Queryable, batch: OutcomeBatch): Promise<RecordedOutcome[]> {
  const { records, policy } = batch;
  if (records.length === 0) return [];
  const column = <T>(pick: (record: OutcomeRecord) => T) => records.map(pick);
  const query: DeadlineQueryConfig = {
    query_timeout: batch.deadlineMs,
    text: RECORD_OUTCOMES.text,
    values: valuesOf(RECORD_OUTCOMES, {
      deliveryIds: column((r) => r.deliveryId),
      leaseTokens: column((r) => r.leaseToken),
      statuses: column((r) => r.status),
      nextAttemptsAt: column((r) => r.nextAttemptAt),
      attempts: column((r) => r.attempt),
      attemptedAt: column((r) => r.attemptedAt),
      statusCodes: column((r) => r.statusCode),
      latenciesMs: column((r) => r.latencyMs),
      errors: column((r) => r.error),
      errorMessages: column((r) => r.errorMessage),
      responseBodies: column((r) => r.responseBody),
      outcomes: column((r) => r.outcome),
      healths: column((r) => r.health),
      disableAfterMs: batch.disableAfterMs,
      maxInFlight: policy.maxInFlight,
      breakerThreshold: policy.breakerThreshold,
      breakerWaitsMs: policy.breakerWaitsMs,
    }),
  };
  const { rows } = await db.query<RecordedRow>(query);
  return outcomesOf(records, rows);
}

/** Each record's outcome, in the records' order, from the statement's rows. */
function outcomesOf(records: readonly OutcomeRecord[], rows: readonly RecordedRow[]): RecordedOutcome[] {
  const byId = new Map(rows.map((row) => [row.id, row]));
  return records.map((record) => {
    const row = byId.get(record.deliveryId);
    return {
      deliveryId: record.deliveryId,
      held: row?.held ?? false,
      subscriptionId: row?.subscription_id ?? null,
      disabledNow: row?.disabled_now ?? false,
      circuitRetryAt: row?.circuit_retry_at ?? null,
      dropped: row === undefined,
    };
  });
}
