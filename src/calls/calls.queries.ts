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
import { COLUMNS, DETAIL_COLUMNS, detailValues } from './call-columns.queries.ts';
import { keyParameters, reservedKeys, KeyHeld, type KeyReservation } from './idempotency.queries.ts';
import type { StoredTraceContext } from '../tracing/trace-context.ts';
import type { CallDetails } from './call-details.ts';

/** A subscription's filters (app_filters_match): the keys of FiltersSchema. */
export interface CallFiltersObject {
  direction?: 'inbound' | 'outbound' | undefined;
  location_id?: string | undefined;
  agent_id?: string | undefined;
  min_duration_seconds?: number | undefined;
}

/** An in-progress call. Throws KeyHeld when `idempotency` names a key its caller already holds (nothing written). */
export async function insertCall(
  db: Queryable,
  input: {
    agentId: string | null;
    details?: CallDetails | undefined;
    traceContext: StoredTraceContext;
    idempotency?: KeyReservation | null;
  },
): Promise<Call> {
  const id = randomUUID();
  const { rows } = await db.query<Call>(
    `WITH ${reservedKeys('SELECT app_current_org(), $6::text, $3::text, $4::bytea, $1::uuid, $5::smallint WHERE $3::text IS NOT NULL')}
     INSERT INTO calls (id, organization_id, agent_id, trace_context, ${DETAIL_COLUMNS})
     SELECT $1::uuid, app_current_org(), $2::uuid, $7::bytea, ${detailValues('$8::text', '$2::uuid')}
      WHERE $3::text IS NULL OR EXISTS (SELECT 1 FROM reserved)
     RETURNING ${COLUMNS}`,
    [id, input.agentId, ...keyParameters(input.idempotency), input.traceContext, JSON.stringify(input.details ?? {})],
  );
  if (!rows[0]) throw new KeyHeld();
  return rows[0];
}

export async function findCall(db: Queryable, id: string): Promise<Call | undefined> {
  const { rows } = await db.query<Call>(`SELECT ${COLUMNS} FROM calls WHERE id = $1`, [id]);
  return rows[0];
}

/** Narrowing of a calls list: status, agent, and a creation-time range [from, before), and the search of GET /calls. */
export interface CallFilters {
  status?: CallStatus | undefined;
  agentId?: string | undefined;
  from?: Date | undefined;
  before?: Date | undefined;
  /** E.164; either side. */
  number?: string | undefined;
  fromNumber?: string | undefined;
  toNumber?: string | undefined;
  direction?: string | undefined;
  locationId?: string | undefined;
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
        AND ($7::text IS NULL OR from_number = $7 OR to_number = $7)
        AND ($8::text IS NULL OR from_number = $8)
        AND ($9::text IS NULL OR to_number = $9)
        AND ($10::text IS NULL OR direction = $10)
        AND ($11::uuid IS NULL OR location_id = $11)
      ORDER BY created_at DESC, id DESC
      LIMIT $3`,
    [
      input.status ?? null,
      input.afterId ?? null,
      input.limit,
      input.agentId ?? null,
      input.from ?? null,
      input.before ?? null,
      input.number ?? null,
      input.fromNumber ?? null,
      input.toNumber ?? null,
      input.direction ?? null,
      input.locationId ?? null,
    ],
  );
  return rows;
}

/**
 * The first page without a filter (list_recent_calls, GET /calls), for a
 * generic plan (withOrgOneStatement's genericPlan): PostgreSQL would plan
 * `LIMIT $1` again for every call, estimating a generic plan at a tenth of the
 * organization's calls, and the planning costs several times the run.
 */
export async function newestCalls(db: Queryable, limit: number): Promise<Call[]> {
  const { rows } = await db.query<Call>(
    `SELECT ${COLUMNS} FROM calls WHERE organization_id = app_current_org() ORDER BY created_at DESC, id DESC LIMIT $1`,
    [limit],
  );
  return rows;
}

/** Whether a location and an agent of these ids are the current organization's (row-level security hides others'). */
export async function findReferences(
  db: Queryable,
  input: { locationId: unknown; agentId: unknown },
): Promise<{ location: boolean; agent: boolean }> {
  const { rows } = await db.query<{ location: boolean; agent: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM locations WHERE id = $1::uuid) AS location, EXISTS (SELECT 1 FROM agents WHERE id = $2::uuid) AS agent`,
    [input.locationId ?? null, input.agentId ?? null],
  );
  return rows[0]!;
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
  input: { limit: number; filters: CallFiltersObject; baseUrl: string },
): Promise<(ActiveAccessToken & { body: string }) | undefined> {
  const { rows } = await db.query<ActiveAccessToken & { body: string }>({
    name: 'calls_recent_for_token',
    text: 'SELECT * FROM app_recent_calls_for_token($1, $2, $3, $4)',
    values: [tokenHash, input.limit, input.filters, input.baseUrl],
  });
  return rows[0];
}
