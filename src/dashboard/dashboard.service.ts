// The home dashboard: are calls coming in, are the connected apps receiving
// them, and if not, which subscriptions need attention.
import type { Pool, Queryable } from '../db/pool.ts';
import { withOrg } from '../db/with-org.ts';
import {
  countCallsPerDay,
  countDeliveriesByStatus,
  insertSealedCallDays,
  listSealedCallDays,
  type DayCount,
  type DeliveryStatusCounts,
} from './dashboard.queries.ts';
import { bucketStarts, DAY_MS, sealedBoundary } from './sealed-windows.ts';

export const CALL_CHART_DAYS = 30;

export interface DashboardFigures {
  /** One entry per UTC day, oldest first, the last being today; zero-filled. */
  callsPerDay: DayCount[];
  /** Deliveries created in the last 24 hours. */
  deliveries24h: DeliveryStatusCounts;
}

/** Midnight UTC of the day `days` before `now`'s day. */
export function startOfUtcDay(now: Date, daysBack = 0): Date {
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return new Date(midnight - daysBack * DAY_MS);
}

/** Every day from `first` for `days` days, with the counts found (0 where none). */
export function fillDays(first: Date, days: number, found: DayCount[]): DayCount[] {
  const byDay = new Map(found.map((d) => [d.day, d.count]));
  return Array.from({ length: days }, (_, i) => {
    const day = new Date(first.getTime() + i * DAY_MS).toISOString().slice(0, 10);
    return { day, count: byDay.get(day) ?? 0 };
  });
}

const dayOf = (date: Date) => date.toISOString().slice(0, 10);

/**
 * Calls per day from `first` on: sealed days from calls_per_day (counted from
 * the calls once, the first time a page needs them), the open window counted
 * now through the (organization_id, created_at) index.
 */
async function callsPerDay(db: Queryable, first: Date, now: Date): Promise<DayCount[]> {
  const boundary = sealedBoundary(now, DAY_MS);
  const stored = await listSealedCallDays(db, dayOf(first));
  const have = new Set(stored.map((d) => d.day));
  const missing = bucketStarts(first, boundary, DAY_MS).filter((d) => !have.has(dayOf(d)));
  let sealed = stored;
  if (missing.length > 0) {
    const counted = new Map((await countCallsPerDay(db, { from: missing[0]!, to: boundary })).map((d) => [d.day, d.count]));
    const fresh = missing.map((d) => ({ day: dayOf(d), count: counted.get(dayOf(d)) ?? 0 }));
    await insertSealedCallDays(db, fresh);
    sealed = [...stored, ...fresh];
  }
  const open = await countCallsPerDay(db, { from: boundary > first ? boundary : first });
  return [...sealed.filter((d) => d.day < dayOf(boundary)), ...open];
}

export async function dashboardFigures(pool: Pool, organizationId: string, now = new Date()): Promise<DashboardFigures> {
  const firstDay = startOfUtcDay(now, CALL_CHART_DAYS - 1);
  return withOrg(pool, organizationId, async (db) => {
    const calls = await callsPerDay(db, firstDay, now);
    const deliveries24h = await countDeliveriesByStatus(db, new Date(now.getTime() - DAY_MS));
    return { callsPerDay: fillDays(firstDay, CALL_CHART_DAYS, calls), deliveries24h };
  });
}
