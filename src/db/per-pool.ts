// State that belongs to one pool, made on first use: a group-commit writer
// must be shared by everything writing through the same pool (that is what
// lets their writes meet in one batch), while tests and the CLI may hold
// several pools in one process. Held weakly, so a closed pool's state goes
// with it.
import type { Pool } from './pool.ts';

/** A getter that makes `create(pool)` once per pool and returns the same value afterwards. */
export function onePerPool<T>(create: (pool: Pool) => T): (pool: Pool) => T {
  const made = new WeakMap<Pool, T>();
  return (pool) => {
    let value = made.get(pool);
    if (value === undefined) {
      value = create(pool);
      made.set(pool, value);
    }
    return value;
  };
}
