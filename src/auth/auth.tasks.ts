// The sign-in tables' housekeeping: expired sessions, and login failures
// whose throttling windows have passed.
import type { Pool } from '../db/pool.ts';
import { HOURLY_MS, type PeriodicJob } from '../tasks/task.ts';
import { deleteStaleFailures } from './login-throttle.queries.ts';
import { deleteExpiredSessions } from './sessions.queries.ts';

export function authHousekeeping({ pool }: { pool: Pool }): PeriodicJob[] {
  return [
    { name: 'sessions-cleanup', everyMs: HOURLY_MS, run: () => deleteExpiredSessions(pool) },
    { name: 'login-failures-cleanup', everyMs: HOURLY_MS, run: () => deleteStaleFailures(pool) },
  ];
}
