// Calls of the current organization (every function runs inside withOrg, so
// the row-level policy limits them to app.organization_id).
//
// A request with an Idempotency-Key reserves its key in the statement that
// writes its call (reservedKeys, idempotency.queries.ts): the key and the call
// commit together or not at all.
// When the caller already holds the key the statement writes nothing
// for that request (or, for a key committed by another transaction meanwhile,
// fails on its primary key), and the caller answers from the stored row.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/pool.ts';
import type { ActiveAccessToken } from '../oauth/tokens.queries.ts';
import type { Call, CallStatus } from './call.ts';
import { reservedKeys, KeyHeld, type KeyReservation } from './idempotency.queries.ts';
import type { StoredTraceContext } from '../tracing/trace-context.ts';

/** A call's columns, as every statement of calls returns them. */
export const COLUMNS = 'id, organization_id, agent_id, status, created_at, completed_at, duration_seconds, summary';

/** An in-progress call. Throws KeyHeld when `idempotency` names a key its caller already holds (nothing written). */
export async function insertCall(
  db: Queryable,
  input: { agentId: string | null; traceContext: StoredTraceContext; idempotency?: KeyReservation | null },
): Promise<Call> {
  const id = randomUUID();
  const { rows } = await db.query<Call>(
    `WITH ${reservedKeys('SELECT app_current_org(), $6::text, $3::text, $4::bytea, $1::uuid, $5::smallint WHERE $3::text IS NOT NULL')}
     INSERT INTO calls (id, organization_id, agent_id, trace_context)
     SELECT $1::uuid, app_current_org(), $2::uuid, $7::bytea WHERE $3::text IS NULL OR EXISTS (SELECT 1 FROM reserved)
     RETURNING ${COLUMNS}`,
    [id, input.agentId, ...keyParameters(input.idempotency), input.traceContext],
  );
  if (!rows[0]) throw new KeyHeld();
  return rows[0];
}

/** A reservation's key, fingerprint, answer status and caller as parameters (nulls without one). */
export function keyParameters(
  reservation: KeyReservation | null | undefined,
): [string | null, Buffer | null, number | null, string | null] {
  return reservation ? [reservation.key, reservation.fingerprint, reservation.status, reservation.caller] : [null, null, null, null];
}

export async function findCall(db: Queryable, id: string): Promise<Call | undefined> {
  const { rows } = await db.query<Call>(`SELECT ${COLUMNS} FROM calls WHERE id = $1`, [id]);
  return rows[0];
}

/** Narrowing of a calls list: status, agent, and a creation-time range [from, before). */
export interface CallFilters {
  status?: CallStatus;
  agentId?: string;
  from?: Date;
  before?: Date;
}

/**
 * Newest first. `afterId` is the last call of the previous page (keyset
 * pagination); its position is read in SQL so microseconds are not lost.
 * The organization condition is spelled out so the (organization_id,
 * created_at) indexes serve the range; the policy checks it too.
 */
export async function listCalls(db: Queryable, input: { limit: number; afterId?: string } & CallFilters): Promise<Call[]> {
  const { rows } = await db.query<Call>(
    `SELECT ${COLUMNS} FROM calls
      WHERE organization_id = app_current_org()
        AND ($1::text IS NULL OR status = $1)
        AND ($2::uuid IS NULL OR (created_at, id) < (SELECT c.created_at, c.id FROM calls c WHERE c.id = $2))
        AND ($4::uuid IS NULL OR agent_id = $4)
        AND ($5::timestamptz IS NULL OR created_at >= $5)
        AND ($6::timestamptz IS NULL OR created_at < $6)
      ORDER BY created_at DESC, id DESC
      LIMIT $3`,
    [input.status ?? null, input.afterId ?? null, input.limit, input.agentId ?? null, input.from ?? null, input.before ?? null],
  );
  return rows;
}

/**
 * GET /calls/recent in one statement (app_recent_calls_for_token): the
 * access token's principal, as findActiveAccessToken reads it, and
 * the JSON array of its organization's recent call.completed events, read as
 * switchboard_app in that organization. Nothing is checked beyond the token
 * being active: the caller decides on the principal (checkPlatformAccess).
 * Undefined: no active token. Runs on the pool, outside any transaction.
 */
export async function readRecentCallsForToken(
  db: Queryable,
  tokenHash: Buffer,
  limit: number,
): Promise<(ActiveAccessToken & { body: string }) | undefined> {
  const { rows } = await db.query<ActiveAccessToken & { body: string }>({
    name: 'calls_recent_for_token',
    text: 'SELECT * FROM app_recent_calls_for_token($1, $2)',
    values: [tokenHash, limit],
  });
  return rows[0];
}
