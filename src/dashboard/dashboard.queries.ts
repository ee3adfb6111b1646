// The aggregates behind the home dashboard, for the current organization
// (inside withOrg). Each reads one bounded time range through an index that
// starts with organization_id (migrations/0011_delivery_health.sql); none
// scans a table. The organization condition is written out, not left to the
// row-level policy alone, so the planner sees it as an index condition.
import type { Queryable } from '../db/pool.ts';

export interface DayCount {
  /** YYYY-MM-DD, UTC. */
  day: string;
  count: number;
}

/** Calls started per UTC day since `since` (days without calls are absent). */
export async function countCallsPerDay(db: Queryable, since: Date): Promise<DayCount[]> {
  const { rows } = await db.query<DayCount>(
    `SELECT to_char(date_trunc('day', created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day, count(*)::int AS count
       FROM calls
      WHERE organization_id = app_current_org() AND created_at >= $1
      GROUP BY 1`,
    [since],
  );
  return rows;
}

export interface DeliveryStatusCounts {
  delivered: number;
  retrying: number;
  failed: number;
}

/**
 * Deliveries created since `since` by where they stand now: delivered, still
 * pending (waiting for their first attempt or a retry), or failed for good.
 */
export async function countDeliveriesByStatus(db: Queryable, since: Date): Promise<DeliveryStatusCounts> {
  const { rows } = await db.query<DeliveryStatusCounts>(
    `SELECT count(*) FILTER (WHERE status = 'succeeded')::int AS delivered,
            count(*) FILTER (WHERE status = 'pending')::int AS retrying,
            count(*) FILTER (WHERE status = 'failed')::int AS failed
       FROM webhook_deliveries
      WHERE organization_id = app_current_org() AND created_at >= $1`,
    [since],
  );
  return rows[0]!;
}
