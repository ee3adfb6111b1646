// Idempotency keys of the current organization (migration 0023): the CTE the
// calls statements claim a key with, the stored request a retry is compared
// with (and the call its answer is rebuilt from), and housekeeping.
import type { Queryable } from '../db/pool.ts';
import type { Call } from './calls.queries.ts';

/** How long a key is remembered; a row older than this is expired (taken over, then removed by housekeeping). */
const KEY_LIFETIME = "interval '24 hours'";

/**
 * A statement claiming a key wrote nothing: the organization holds the key
 * already, or (when `otherwise` is given) the request was refused for that
 * reason, unless the key turns out to be held.
 */
export class KeyHeld extends Error {
  constructor(readonly otherwise?: Error) {
    super('the idempotency key is held, or the write was refused');
  }
}

/** A key, the digest of the request it comes with (src/calls/idempotency.ts) and the status of its answer. */
export interface KeyClaim {
  key: string;
  fingerprint: Buffer;
  status: number;
}

/**
 * The CTE `claimed`: stores each key `rows` selects (organization_id, key,
 * fingerprint, call_id, response_status), returning the call_id of every key
 * it stored. A key the organization already holds (unexpired) is not stored
 * and not returned: the statement must then write nothing for that request.
 * A concurrent transaction inserting the same key makes this wait for its end
 * (the primary key), so of two only one stores it. An expired row is taken
 * over in place.
 */
export function claimedKeys(rows: string): string {
  return `claimed AS (
    INSERT INTO idempotency_keys AS k (organization_id, key, fingerprint, call_id, response_status)
    ${rows}
    ON CONFLICT ON CONSTRAINT idempotency_keys_pkey DO UPDATE
       SET fingerprint = EXCLUDED.fingerprint, call_id = EXCLUDED.call_id, response_status = EXCLUDED.response_status,
           created_at = EXCLUDED.created_at
     WHERE k.created_at <= now() - ${KEY_LIFETIME}
    RETURNING k.call_id)`;
}

export interface StoredRequest {
  fingerprint: Buffer;
  response_status: number;
  /** The call the first request created or completed. */
  call: Call;
}

/** An unexpired key of the current organization, with its call. */
export async function findStoredRequest(db: Queryable, key: string): Promise<StoredRequest | undefined> {
  const { rows } = await db.query<Omit<StoredRequest, 'call'> & Call>(
    `SELECT k.fingerprint, k.response_status,
            c.id, c.organization_id, c.agent_id, c.status, c.created_at, c.completed_at, c.duration_seconds, c.summary
       FROM idempotency_keys k JOIN calls c ON c.organization_id = k.organization_id AND c.id = k.call_id
      WHERE k.organization_id = app_current_org() AND k.key = $1 AND k.created_at > now() - ${KEY_LIFETIME}`,
    [key],
  );
  const row = rows[0];
  if (!row) return undefined;
  const { fingerprint, response_status, ...call } = row;
  return { fingerprint, response_status, call };
}

/** Housekeeping (owner role): expired keys, in batches so no delete holds locks for long. */
export async function deleteExpiredKeys(db: Queryable, batch: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM idempotency_keys
      WHERE (organization_id, key) IN (SELECT organization_id, key FROM idempotency_keys
                                        WHERE created_at <= now() - ${KEY_LIFETIME} LIMIT $1)`,
    [batch],
  );
  return rowCount ?? 0;
}
