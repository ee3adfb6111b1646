// The aggregates behind the home dashboard, for the current organization
// (inside withOrg). Raw counts read one bounded time range through an index
// that starts with organization_id (calls_organization_created_idx,
// webhook_deliveries_organization_created_idx); the
// organization condition is written out, not left to the row-level policy
// alone, so the planner sees it as an index condition. Sealed days come from
// calls_per_day.
import type { Queryable } from '../db/pool.ts';

export interface DayCount {
  /** YYYY-MM-DD, UTC. */
  day: string;
  count: number;
}

/** Stored counts of sealed days from `first` (a date) on. */
export async function listSealedCallDays(db: Queryable, first: string): Promise<DayCount[]> {
  const { rows } = await db.query<DayCount>(
    `SELECT to_char(day, 'YYYY-MM-DD') AS day, calls AS count FROM calls_per_day
      WHERE organization_id = app_current_org() AND day >= $1::date`,
    [first],
  );
  return rows;
}

/** Calls started per UTC day in [from, to) (days without calls are absent). */
export async function countCallsPerDay(db: Queryable, range: { from: Date; to?: Date }): Promise<DayCount[]> {
  const { rows } = await db.query<DayCount>(
    `SELECT to_char(date_trunc('day', created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day, count(*)::int AS count
       FROM calls
      WHERE organization_id = app_current_org() AND created_at >= $1 AND ($2::timestamptz IS NULL OR created_at < $2)
      GROUP BY 1`,
    [range.from, range.to ?? null],
  );
  return rows;
}

/** Stores the counts of sealed days (zeros included); a day stored already is left as it is. */
export async function insertSealedCallDays(db: Queryable, days: DayCount[]): Promise<void> {
  if (days.length === 0) return;
  await db.query(
    `INSERT INTO calls_per_day (organization_id, day, calls)
     SELECT app_current_org(), d.day, d.calls FROM unnest($1::date[], $2::int[]) AS d(day, calls)
     ON CONFLICT (organization_id, day) DO NOTHING`,
    [days.map((d) => d.day), days.map((d) => d.count)],
  );
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
