// The home dashboard: are calls coming in, are the connected apps receiving
// them, and if not, which subscriptions need attention.
import type { Pool } from '../db/pool.ts';
import { withOrg } from '../db/with-org.ts';
import { countCallsPerDay, countDeliveriesByStatus, type DayCount, type DeliveryStatusCounts } from './dashboard.queries.ts';

export const CALL_CHART_DAYS = 30;
const DAY_MS = 86_400_000;

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

export async function dashboardFigures(pool: Pool, organizationId: string, now = new Date()): Promise<DashboardFigures> {
  const firstDay = startOfUtcDay(now, CALL_CHART_DAYS - 1);
  return withOrg(pool, organizationId, async (db) => {
    const calls = await countCallsPerDay(db, firstDay);
    const deliveries24h = await countDeliveriesByStatus(db, new Date(now.getTime() - DAY_MS));
    return { callsPerDay: fillDays(firstDay, CALL_CHART_DAYS, calls), deliveries24h };
  });
}
