// A subscription's delivery health for its page: outcomes per hour (24 h) and
// per day (7 d), latency p50/p95, and the last error said in words.
import { STATUS_CODES } from 'node:http';
import type { Principal } from '../auth/principal.ts';
import type { Pool } from '../db/pool.ts';
import { withOrg } from '../db/with-org.ts';
import type { Queryable } from '../db/pool.ts';
import { bucketStarts, DAY_MS, HOUR_MS, sealedBoundary } from '../dashboard/sealed-windows.ts';
import {
  countAttemptOutcomesPerHour,
  countFailedDeliveries,
  findLatestFailedAttempt,
  insertSealedAttemptHours,
  latencyPercentiles,
  listSealedAttemptHours,
  type FailedAttempt,
  type HourOutcomes,
  type LatencyPercentiles,
  summarizeSubscriptionOutcomes,
} from './delivery-health.queries.ts';
import { listSubscriptions } from './subscriptions.queries.ts';
import { subscriptionView, type SubscriptionView } from './subscriptions.service.ts';
import { RECOVER_BATCH, RECOVER_WINDOW_MS } from './recovery.service.ts';
import { visibleSubscription } from './visible-subscription.ts';

export interface OutcomeBucket {
  /** Hour "YYYY-MM-DDTHH" or day "YYYY-MM-DD", UTC. */
  label: string;
  succeeded: number;
  retrying: number;
  failed: number;
}

export interface DeliveryHealth {
  perHour: OutcomeBucket[];
  perDay: OutcomeBucket[];
  latency24h: LatencyPercentiles;
  lastError: { at: string; attempt: number; words: string; detail: string | null } | null;
  /** Failed deliveries recover would send (counted up to RECOVER_BATCH + 1). */
  failedDeliveries: number;
}

function emptyBucket(label: string): OutcomeBucket {
  return { label, succeeded: 0, retrying: 0, failed: 0 };
}

/** 24 hourly buckets ending with the current hour, and 7 daily ones ending today, from one hourly count. */
export function bucketOutcomes(hours: HourOutcomes[], now: Date): { perHour: OutcomeBucket[]; perDay: OutcomeBucket[] } {
  const currentHour = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS;
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  const perHour = Array.from({ length: 24 }, (_, i) => emptyBucket(new Date(currentHour - (23 - i) * HOUR_MS).toISOString().slice(0, 13)));
  const perDay = Array.from({ length: 7 }, (_, i) => emptyBucket(new Date(today - (6 - i) * DAY_MS).toISOString().slice(0, 10)));
  const hourIndex = new Map(perHour.map((b, i) => [b.label, i]));
  const dayIndex = new Map(perDay.map((b, i) => [b.label, i]));
  for (const row of hours) {
    for (const [index, buckets, key] of [
      [hourIndex, perHour, row.hour],
      [dayIndex, perDay, row.hour.slice(0, 10)],
    ] as const) {
      const bucket = buckets[index.get(key) ?? -1];
      if (!bucket) continue;
      bucket.succeeded += row.succeeded;
      bucket.retrying += row.retrying;
      bucket.failed += row.failed;
    }
  }
  return { perHour, perDay };
}

const ERROR_WORDS: Record<string, string> = {
  timeout: 'The receiver did not answer in time.',
  connection: 'Switchboard could not connect to the receiver.',
  tls: 'The secure (TLS) connection to the receiver failed: its certificate or TLS setup was refused.',
  blocked_address: 'The target URL leads to a private or reserved network address, which Switchboard never calls.',
  invalid_url: 'The target URL is not a valid public https URL.',
  lease_expired: 'The attempt was interrupted on our side (a delivery worker stopped); it is retried.',
  internal: 'The attempt failed on our side; it is retried.',
};

/** One failed attempt, as a sentence a person can act on. */
export function describeFailure(attempt: Pick<FailedAttempt, 'status_code' | 'error' | 'outcome'>): string {
  if (attempt.outcome === 'subscription_removed') return 'The receiver answered 410 Gone: the app asked to stop receiving these events.';
  if (attempt.error) return ERROR_WORDS[attempt.error] ?? `The attempt failed (${attempt.error}).`;
  if (attempt.status_code !== null) {
    const name = STATUS_CODES[attempt.status_code];
    const kind =
      attempt.status_code >= 500
        ? 'an error on its side'
        : attempt.status_code >= 400
          ? 'that it refused the request'
          : 'an answer that is not a success';
    return `The receiver answered ${attempt.status_code}${name ? ` ${name}` : ''}, ${kind}.`;
  }
  return 'The attempt failed.';
}

function failureDetail(attempt: FailedAttempt): string | null {
  const detail = attempt.error_message ?? attempt.response_body;
  if (!detail) return null;
  const flat = detail.replace(/\s+/g, ' ').trim();
  return flat.length > 300 ? `${flat.slice(0, 300)}…` : flat || null;
}

const hourOf = (date: Date) => date.toISOString().slice(0, 13);

/**
 * Attempt outcomes per hour from `from` on: sealed hours from
 * webhook_attempts_per_hour (counted from the attempts once, the first time a
 * page needs them), the open window counted now through the subscription's index.
 */
async function outcomesPerHour(db: Queryable, subscriptionId: string, from: Date, now: Date): Promise<HourOutcomes[]> {
  const boundary = sealedBoundary(now, HOUR_MS);
  const stored = await listSealedAttemptHours(db, { subscriptionId, from });
  const have = new Set(stored.map((h) => h.hour));
  const missing = bucketStarts(from, boundary, HOUR_MS).filter((h) => !have.has(hourOf(h)));
  let sealed = stored;
  if (missing.length > 0) {
    const counted = new Map(
      (await countAttemptOutcomesPerHour(db, { subscriptionId, from: missing[0]!, to: boundary })).map((h) => [h.hour, h]),
    );
    const fresh = missing.map((h) => counted.get(hourOf(h)) ?? { hour: hourOf(h), succeeded: 0, retrying: 0, failed: 0 });
    await insertSealedAttemptHours(db, subscriptionId, fresh);
    sealed = [...stored, ...fresh];
  }
  const open = await countAttemptOutcomesPerHour(db, { subscriptionId, from: boundary > from ? boundary : from });
  return [...sealed.filter((h) => h.hour < hourOf(boundary)), ...open];
}

export async function deliveryHealth(pool: Pool, principal: Principal, subscriptionId: string, now = new Date()): Promise<DeliveryHealth> {
  return withOrg(pool, principal.organizationId, async (db) => {
    await visibleSubscription(db, principal, subscriptionId);
    const weekStart = new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS - 6 * DAY_MS);
    const hours = await outcomesPerHour(db, subscriptionId, weekStart, now);
    const latency24h = await latencyPercentiles(db, { subscriptionId, since: new Date(now.getTime() - DAY_MS) });
    const latest = await findLatestFailedAttempt(db, subscriptionId);
    const failedDeliveries = await countFailedDeliveries(db, {
      subscriptionId,
      since: new Date(now.getTime() - RECOVER_WINDOW_MS),
      cap: RECOVER_BATCH + 1,
    });
    return {
      ...bucketOutcomes(hours, now),
      latency24h,
      lastError: latest
        ? { at: latest.attempted_at.toISOString(), attempt: latest.attempt, words: describeFailure(latest), detail: failureDetail(latest) }
        : null,
      failedDeliveries,
    };
  });
}

/** Every subscription of the organization (every client's) with its last success and its failed attempts of the last 24 hours. */
export async function organizationDeliveryHealth(
  pool: Pool,
  organizationId: string,
): Promise<{ subscription: SubscriptionView; lastSuccessAt: Date | null; failures24h: number }[]> {
  return withOrg(pool, organizationId, async (db) => {
    const subscriptions = await listSubscriptions(db, undefined);
    const outcomes = new Map((await summarizeSubscriptionOutcomes(db)).map((o) => [o.subscription_id, o]));
    return subscriptions.map((row) => {
      const outcome = outcomes.get(row.id);
      return {
        subscription: subscriptionView(row),
        lastSuccessAt: outcome?.last_success_at ?? null,
        failures24h: outcome?.failures_24h ?? 0,
      };
    });
  });
}
