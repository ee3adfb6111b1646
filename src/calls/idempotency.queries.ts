// Idempotency keys of the current organization, each its caller's (table
// idempotency_keys): the CTE the calls statements reservation a key with, the stored request a retry is compared
// with (and the call its answer is rebuilt from), and housekeeping.
import type { Queryable } from '../db/pool.ts';
import { UNIQUE_VIOLATION, violatedConstraint } from '../db/pg-errors.ts';
import type { Call } from './call.ts';
import { callColumns } from './call-columns.queries.ts';

/** How long a key is remembered; a row older than this is expired (removed by housekeeping, or by the next request with its key). */
const KEY_LIFETIME = "interval '24 hours'";

/**
 * A statement reserving a key wrote nothing: the caller holds the key
 * already, or (when `otherwise` is given) the request was refused for that
 * reason, unless the key turns out to be held.
 */
export class KeyHeld extends Error {
  readonly otherwise: Error | undefined;
  constructor(otherwise?: Error) {
    super('the idempotency key is held, or the write was refused');
    this.otherwise = otherwise;
  }
}

/** A caller's key, the digest of the request it comes with (src/calls/idempotency.ts) and the status of its answer. */
export interface KeyReservation {
  /** Whose key it is (keyCaller, src/calls/idempotency.ts). */
  caller: string;
  key: string;
  fingerprint: Buffer;
  status: number;
}

/**
 * The CTE `reserved`: stores each key `rows` selects (organization_id, caller,
 * key, fingerprint, call_id, response_status) that its caller does not hold
 * yet, returning the call_id of every key it stored; the statement must write
 * nothing for a request whose key it did not store. A key another transaction
 * stored after this statement's snapshot fails the statement on the primary
 * key (after waiting for that transaction, if it is still open): the caller
 * finds the key held (keyTaken). Keys are inserted in key order, so two
 * statements reserving the same keys wait for each other instead of deadlocking.
 *
 * A plain insert behind a NOT EXISTS rather than ON CONFLICT: PostgreSQL's
 * speculative insertion (a lock and a second WAL record per row) cost about
 * as much again as the row itself (docs/decisions.md, "Idempotency keys").
 */
export function reservedKeys(rows: string): string {
  return `reserved AS (
    INSERT INTO idempotency_keys (organization_id, caller, key, fingerprint, call_id, response_status)
    SELECT r.* FROM (${rows}) AS r (organization_id, caller, key, fingerprint, call_id, response_status)
     -- A scalar subquery, not NOT EXISTS: planned as an anti-join, that read the whole table per statement.
     WHERE (SELECT true FROM idempotency_keys k
             WHERE k.organization_id = r.organization_id AND k.caller = r.caller AND k.key = r.key) IS NULL
     ORDER BY r.key
    RETURNING call_id)`;
}

/** A statement that failed because another transaction stored one of its keys first. */
export function keyTaken(error: unknown): boolean {
  return violatedConstraint(error, UNIQUE_VIOLATION) === 'idempotency_keys_pkey';
}

export interface StoredRequest {
  fingerprint: Buffer;
  response_status: number;
  /** The call the first request created or completed. */
  call: Call;
}

/** An unexpired key of a caller of the current organization, with its call. */
export async function findStoredRequest(db: Queryable, caller: string, key: string): Promise<StoredRequest | undefined> {
  const { rows } = await db.query<Omit<StoredRequest, 'call'> & Call>(
    `SELECT k.fingerprint, k.response_status, ${callColumns('c')}
       FROM idempotency_keys k JOIN calls c ON c.organization_id = k.organization_id AND c.id = k.call_id
      WHERE k.organization_id = app_current_org() AND k.caller = $1 AND k.key = $2 AND k.created_at > now() - ${KEY_LIFETIME}`,
    [caller, key],
  );
  const row = rows[0];
  if (!row) return undefined;
  const { fingerprint, response_status, ...call } = row;
  return { fingerprint, response_status, call };
}

/** An expired key of a caller of the current organization that housekeeping has not removed yet; whether there was one. */
export async function deleteExpiredKey(db: Queryable, caller: string, key: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `DELETE FROM idempotency_keys
      WHERE organization_id = app_current_org() AND caller = $1 AND key = $2 AND created_at <= now() - ${KEY_LIFETIME}`,
    [caller, key],
  );
  return (rowCount ?? 0) > 0;
}

/** Housekeeping (owner role): expired keys, in batches so no delete holds locks for long. */
export async function deleteExpiredKeys(db: Queryable, batch: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM idempotency_keys
      WHERE (organization_id, caller, key) IN (SELECT organization_id, caller, key FROM idempotency_keys
                                                WHERE created_at <= now() - ${KEY_LIFETIME} LIMIT $1)`,
    [batch],
  );
  return rowCount ?? 0;
}

/** A reservation's key, fingerprint, answer status and caller as parameters (nulls without one). */
export function keyParameters(
  reservation: KeyReservation | null | undefined,
): [string | null, Buffer | null, number | null, string | null] {
  return reservation ? [reservation.key, reservation.fingerprint, reservation.status, reservation.caller] : [null, null, null, null];
}
