// Idempotency keys of the current organization (migration 0023): the SQL
// pieces the calls statements claim a key with, the stored answer a retry is
// given, and housekeeping.
import type { Queryable } from '../db/pool.ts';

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

/** A key and the digest of the request it comes with (src/calls/idempotency.ts). */
export interface KeyClaim {
  key: string;
  fingerprint: Buffer;
}

/** SQL expressions (column references or parameters) for the fields of a call's API view. */
export interface CallViewExpressions {
  id: string;
  organizationId: string;
  agentId: string;
  status: string;
  createdAt: string;
  completedAt: string;
  durationSeconds: string;
  summary: string;
}

const isoTime = (expression: string) => `to_char((${expression}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The API's view of a call (callView in calls.service.ts) as jsonb, so the
 * statement that writes the call can store the answer with it. The values are
 * the ones callView gives (times as toISOString() writes node-postgres'
 * millisecond Dates: truncated, UTC, "Z"); a replay puts the fields back in
 * callView's order and goes through the same response schema, so its bytes
 * are the first answer's (test/calls/idempotency.test.ts compares them).
 */
export function callViewJson(c: CallViewExpressions): string {
  return `jsonb_build_object('id', ${c.id}, 'organization_id', ${c.organizationId}, 'agent_id', ${c.agentId},
    'status', ${c.status}, 'created_at', ${isoTime(c.createdAt)}, 'completed_at', ${isoTime(c.completedAt)},
    'duration_seconds', ${c.durationSeconds}, 'summary', ${c.summary})`;
}

/**
 * The CTE `claimed`: stores each key `rows` selects (organization_id, key,
 * fingerprint, call_id, response_status, response_body), returning the
 * call_id of every key it stored. A key the organization already holds
 * (unexpired) is not stored and not returned: the statement must then write
 * nothing for that request. A concurrent transaction inserting the same key
 * makes this wait for its end (the unique index), so of two only one stores
 * it. An expired row is taken over in place.
 */
export function claimedKeys(rows: string): string {
  return `claimed AS (
    INSERT INTO idempotency_keys AS k (organization_id, key, fingerprint, call_id, response_status, response_body)
    ${rows}
    ON CONFLICT ON CONSTRAINT idempotency_keys_pkey DO UPDATE
       SET fingerprint = EXCLUDED.fingerprint, call_id = EXCLUDED.call_id, response_status = EXCLUDED.response_status,
           response_body = EXCLUDED.response_body, created_at = EXCLUDED.created_at
     WHERE k.created_at <= now() - ${KEY_LIFETIME}
    RETURNING k.call_id)`;
}

export interface StoredAnswer {
  fingerprint: Buffer;
  response_status: number;
  response_body: unknown;
}

/** The answer stored with an unexpired key of the current organization. */
export async function findStoredAnswer(db: Queryable, key: string): Promise<StoredAnswer | undefined> {
  const { rows } = await db.query<StoredAnswer>(
    `SELECT fingerprint, response_status, response_body FROM idempotency_keys
      WHERE organization_id = app_current_org() AND key = $1 AND created_at > now() - ${KEY_LIFETIME}`,
    [key],
  );
  return rows[0];
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
