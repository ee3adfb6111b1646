// One subscription's delivery health (inside withOrg): attempt outcomes per
// hour, latency percentiles, the newest failure, and how many deliveries
// failed for good. Each reads a bounded range of an index keyed by
// subscription_id (webhook_attempts_subscription_idx and _failures_idx,
// webhook_deliveries_failed_idx): the attempts ones are
// index-only scans, since attempts are written once and never updated.
import type { Queryable } from '../db/pool.ts';
import { RECOVERABLE } from './recover.queries.ts';

export interface HourOutcomes {
  /** YYYY-MM-DDTHH, UTC. */
  hour: string;
  succeeded: number;
  retrying: number;
  failed: number;
}

const HOUR_LABEL = `to_char(hour AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24')`;

/**
 * Attempts per UTC hour in [from, to), by outcome: succeeded, failed but to be
 * retried, failed for good (a 410 that removed the subscription counts as failed).
 */
export async function countAttemptOutcomesPerHour(
  db: Queryable,
  input: { subscriptionId: string; from: Date; to?: Date },
): Promise<HourOutcomes[]> {
  const { rows } = await db.query<HourOutcomes>(
    `SELECT to_char(date_trunc('hour', attempted_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD"T"HH24') AS hour,
            count(*) FILTER (WHERE outcome = 'succeeded')::int AS succeeded,
            count(*) FILTER (WHERE outcome = 'retrying')::int AS retrying,
            count(*) FILTER (WHERE outcome IN ('failed', 'subscription_removed'))::int AS failed
       FROM webhook_attempts
      WHERE subscription_id = $1 AND attempted_at >= $2 AND ($3::timestamptz IS NULL OR attempted_at < $3)
      GROUP BY 1`,
    [input.subscriptionId, input.from, input.to ?? null],
  );
  return rows;
}

/** Stored counts of the subscription's sealed hours from `from` on. */
export async function listSealedAttemptHours(db: Queryable, input: { subscriptionId: string; from: Date }): Promise<HourOutcomes[]> {
  const { rows } = await db.query<HourOutcomes>(
    `SELECT ${HOUR_LABEL} AS hour, succeeded, retrying, failed FROM webhook_attempts_per_hour
      WHERE subscription_id = $1 AND hour >= $2`,
    [input.subscriptionId, input.from],
  );
  return rows;
}

/**
 * Stores sealed hours (zeros included; `hour` is "YYYY-MM-DDTHH", UTC); an hour
 * stored already is left as it is. Nothing is stored for a subscription
 * deleted meanwhile (the page that counted them still shows them): the row is
 * locked FOR KEY SHARE, SKIP LOCKED, so one being deleted, or deleted since
 * this statement's snapshot, is not there to insert for, and any other stays
 * until commit for the foreign-key check, which reads the newest version.
 */
export async function insertSealedAttemptHours(db: Queryable, subscriptionId: string, hours: HourOutcomes[]): Promise<void> {
  if (hours.length === 0) return;
  await db.query(
    `INSERT INTO webhook_attempts_per_hour (organization_id, subscription_id, hour, succeeded, retrying, failed)
     SELECT s.organization_id, s.id, (h.hour || ':00:00Z')::timestamptz, h.succeeded, h.retrying, h.failed
       FROM (SELECT organization_id, id FROM webhook_subscriptions WHERE id = $1 FOR KEY SHARE SKIP LOCKED) s,
            unnest($2::text[], $3::int[], $4::int[], $5::int[]) AS h(hour, succeeded, retrying, failed)
     ON CONFLICT (subscription_id, hour) DO NOTHING`,
    [subscriptionId, hours.map((h) => h.hour), hours.map((h) => h.succeeded), hours.map((h) => h.retrying), hours.map((h) => h.failed)],
  );
}

/** Retention (owner role): stored hours older than the delivery log. */
export async function deleteAttemptHoursBefore(db: Queryable, cutoff: Date): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM webhook_attempts_per_hour WHERE hour < $1', [cutoff]);
  return rowCount ?? 0;
}

export interface LatencyPercentiles {
  p50: number | null;
  p95: number | null;
  /** Attempts that got an answer (the ones with a latency). */
  answered: number;
}

/** p50 and p95 of answered attempts since `since`, in milliseconds. */
export async function latencyPercentiles(db: Queryable, input: { subscriptionId: string; since: Date }): Promise<LatencyPercentiles> {
  const { rows } = await db.query<LatencyPercentiles>(
    `SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY latency_ms) AS p50,
            percentile_disc(0.95) WITHIN GROUP (ORDER BY latency_ms) AS p95,
            count(*)::int AS answered
       FROM webhook_attempts
      WHERE subscription_id = $1 AND attempted_at >= $2 AND latency_ms IS NOT NULL`,
    [input.subscriptionId, input.since],
  );
  return rows[0]!;
}

export interface FailedAttempt {
  attempted_at: Date;
  attempt: number;
  status_code: number | null;
  error: string | null;
  error_message: string | null;
  response_body: string | null;
  outcome: string;
}

/** The newest attempt that did not succeed (matches webhook_attempts_subscription_failures_idx). */
export async function findLatestFailedAttempt(db: Queryable, subscriptionId: string): Promise<FailedAttempt | undefined> {
  const { rows } = await db.query<FailedAttempt>(
    `SELECT attempted_at, attempt, status_code, error, error_message, response_body, outcome
       FROM webhook_attempts
      WHERE subscription_id = $1 AND outcome <> 'succeeded' AND outcome <> 'superseded'
      ORDER BY attempted_at DESC
      LIMIT 1`,
    [subscriptionId],
  );
  return rows[0];
}

/** Deliveries that failed for good, created since `since`, counted up to `cap` (what recover would send). */
export async function countFailedDeliveries(db: Queryable, input: { subscriptionId: string; since: Date; cap: number }): Promise<number> {
  const { rows } = await db.query<{ count: number }>(
    `SELECT count(*)::int AS count FROM (
       SELECT 1 FROM webhook_deliveries d
        WHERE d.subscription_id = $1 AND d.created_at >= $2 AND ${RECOVERABLE}
        LIMIT $3
     ) failed`,
    [input.subscriptionId, input.since, input.cap],
  );
  return rows[0]!.count;
}

export interface SubscriptionOutcomeSummary {
  subscription_id: string;
  last_success_at: Date | null;
  failures_24h: number;
}

/** Tenant query (withOrg): per subscription of the organization, its last successful attempt and its failed attempts of the last 24 hours. */
export async function summarizeSubscriptionOutcomes(db: Queryable): Promise<SubscriptionOutcomeSummary[]> {
  const { rows } = await db.query<SubscriptionOutcomeSummary>(
    `SELECT s.id AS subscription_id,
            (SELECT max(a.attempted_at) FROM webhook_attempts a
              WHERE a.subscription_id = s.id AND a.outcome = 'succeeded') AS last_success_at,
            (SELECT count(*)::int FROM webhook_attempts a
              WHERE a.subscription_id = s.id AND a.outcome IN ('retrying', 'failed')
                AND a.attempted_at > now() - interval '24 hours') AS failures_24h
       FROM webhook_subscriptions s`,
  );
  return rows;
}
