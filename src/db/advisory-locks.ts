// Every advisory lock of the database, one key scheme: two int4 keys, the
// lock's class and the hash of the id it guards. The scheme and the list of
// classes are the schema's (`app_lock_class`, `app_lock`, `app_lock_shared`,
// `app_try_lock` in db/schema.sql), so functions of the schema and this code
// take the same keys; who takes each lock, and in what order, is
// docs/delivery-engine.md ("Locks").
//
//   migrations            session-level, exclusive: src/db/migrate.ts
//   claim                 per subscription: the claim (try), recover (wait); webhooks/claim-lock.ts
//   client                per OAuth client_id: its deletion (exclusive), refresh and the token checks (shared);
//                         `app_lock_client`, `app_lock_client_shared`
//   active_subscriptions  per organization: subscribing and re-enabling (webhooks/subscription-limit.queries.ts)
//   primary_location      per organization: marking a primary location (locations/locations.queries.ts)

/** The transaction-level locks the code takes by name (`app_lock_class` lists them with their classes). */
export type AdvisoryLock = 'claim' | 'client' | 'active_subscriptions' | 'primary_location';

/** SQL: takes `lock` on `id` (a uuid or text expression) until the transaction ends, waiting for its holder. */
export const lockSql = (lock: AdvisoryLock, id: string): string => `app_lock('${lock}', ${id})`;

/** SQL: takes `lock` on `id` (a uuid expression) until the transaction ends if it is free; true if taken, never waits. */
export const tryLockSql = (lock: AdvisoryLock, id: string): string => `app_try_lock('${lock}', ${id})`;

/**
 * The migrations' lock, (`app_lock_class('migrations')`, 0): session-level, taken before any migration has run,
 * so before `app_lock_class` exists; its class is written here too (test/db/advisory-locks.test.ts compares them).
 */
export const MIGRATIONS_LOCK: readonly [number, number] = [0x5357_4d47, 0]; // "SWMG"
