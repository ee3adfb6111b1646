// The calls' housekeeping: idempotency keys older than 24 hours.
import type { Pool } from '../db/pool.ts';
import { HOURLY_MS, type PeriodicJob } from '../tasks/task.ts';
import { purgeExpiredIdempotencyKeys } from './idempotency.ts';

export function callsHousekeeping({ pool }: { pool: Pool }): PeriodicJob[] {
  return [{ name: 'idempotency-keys-cleanup', everyMs: HOURLY_MS, run: () => purgeExpiredIdempotencyKeys(pool) }];
}
