// Completed calls and their call.completed deliveries, the transactional
// outbox (docs/interface.md §6.4; docs/delivery-engine.md, T1): each
// statement here writes its calls and their deliveries, and notifies the
// delivery workers, in one statement. Every function runs inside withOrg.
//
// A request with an Idempotency-Key reserves its key in the same statement
// (reservedKeys, idempotency.queries.ts; see calls.queries.ts).
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/pool.ts';
import { DELIVERIES_CHANNEL, payloadNaming } from '../webhooks/deliveries-channel.queries.ts';
import type { CompletedCall } from './call.ts';
import { COLUMNS, completionDetailAssignments, DETAIL_COLUMNS, detailValues, returnedCallColumns } from './call-columns.queries.ts';
import type { CallDetails } from './call-details.ts';
import { keyParameters, reservedKeys, KeyHeld, type KeyReservation } from './idempotency.queries.ts';
import { newTraceContext, type StoredTraceContext } from '../tracing/trace-context.ts';

/**
 * A completion's trace context: the one its request carried wins
 * (`received`); without one the call keeps the context it was created with;
 * a call that has none (created before contexts were kept) takes `fresh`.
 */
export interface CompletionTraceContext {
  received: StoredTraceContext | undefined;
  fresh: StoredTraceContext;
}

/**
 * The call.completed body of a call, written by PostgreSQL (app_call_event,
 * the same event /calls/recent lists) in the statement that writes the call,
 * so the call and its deliveries are written by one statement.
 */
const RETURNING = `RETURNING ${COLUMNS}, trace_context, app_call_event(calls) AS event`;

/**
 * The transactional outbox (docs/interface.md §6.4) in one statement: `callStatement`
 * (an INSERT or UPDATE of calls RETURNING the completed calls, one or many) runs with the
 * insert of one delivery per active call.completed subscription of the
 * call's organization whose grant still stands (a revocation committing
 * beside this transaction is caught again by the reservation; the unique
 * (subscription, call) key makes it exactly once) and, if any was inserted, a NOTIFY, which PostgreSQL delivers only
 * when the surrounding transaction commits, naming the subscriptions (see
 * notifiedSubscriptions). Returns each call's columns (and `notified`, the
 * NOTIFY's empty result); no row when `callStatement` returned none.
 *
 * A subscription removed or stopped while this runs gets no delivery, and
 * the call is stored all the same: each subscription read is locked FOR KEY
 * SHARE SKIP LOCKED, in id order (the lock the deliveries' foreign-key check
 * takes anyway, taken here first; who else locks it and how:
 * docs/delivery-engine.md, "Locks"). Reading the rows without the lock, the
 * foreign-key check at the end of the statement (which reads the newest
 * version) failed for a subscription deleted after the read.
 *
 * `before`: CTEs (`name AS (…)`, comma-separated) that `callStatement` may
 * read, such as the idempotency key reservation in idempotency.queries.ts.
 */
const MATCHES = 'app_filters_match(s.filters, call.direction, call.location_id, call.agent_id, call.duration_seconds)';

function withCallCompletedOutbox(callStatement: string, before = ''): string {
  return `WITH ${
    before
      ? `${before},
     `
      : ''
  }call AS (${callStatement}),
     -- Each grant is tested once per statement, however many subscriptions
     -- stand on it (an organization's hundreds of subscriptions often share one).
     subscribed_grant AS MATERIALIZED (
       SELECT DISTINCT s.grant_id FROM webhook_subscriptions s
        WHERE s.organization_id IN (SELECT call.organization_id FROM call)
          AND s.event = 'call.completed' AND s.status = 'active'
     ),
     live_grant AS MATERIALIZED (
       SELECT g.grant_id FROM subscribed_grant g WHERE app_grant_is_live(g.grant_id)
     ),
     -- The event and status tests stay here: PostgreSQL re-checks them on the
     -- newest version of a row updated while the lock waited. In id order, as
     -- every locker of several subscriptions takes them: SKIP LOCKED does not
     -- skip a row updated since this statement's snapshot whose newest version
     -- is locked, it waits, and a client's deletion (FOR UPDATE in id order)
     -- waiting meanwhile for a row this statement locked out of order deadlocked.
     -- Only subscriptions whose filters let one of the calls through are read
     -- (and locked): a hundred filtered subscriptions cost about what the few
     -- that match do. app_filters_match is the rule's one home.
     subscriber AS MATERIALIZED (
       SELECT s.organization_id, s.id, s.event, s.filters
         FROM webhook_subscriptions s
        WHERE EXISTS (SELECT 1 FROM call WHERE call.organization_id = s.organization_id AND ${MATCHES})
          AND s.event = 'call.completed' AND s.status = 'active'
          AND s.grant_id IN (SELECT live_grant.grant_id FROM live_grant)
        ORDER BY s.id
          FOR KEY SHARE OF s SKIP LOCKED
     ),
     deliveries AS (
       INSERT INTO webhook_deliveries (organization_id, subscription_id, call_id, event, body, trace_context)
       SELECT s.organization_id, s.id, call.id, s.event, call.event, call.trace_context
         FROM call JOIN subscriber s ON s.organization_id = call.organization_id AND ${MATCHES}
       ON CONFLICT ON CONSTRAINT webhook_deliveries_subscription_call_key DO NOTHING
       RETURNING subscription_id
     ),
     enqueued AS (
       SELECT count(*)::int AS n,
              ${payloadNaming('subscription_id')} AS subscriptions
         FROM deliveries
     )
     -- The notification is an uncorrelated subquery: sent once per statement, however many calls it writes.
     -- The call's columns only: its event and trace context are for the deliveries, not worth sending back.
     SELECT ${returnedCallColumns('call')},
            (SELECT pg_notify('${DELIVERIES_CHANNEL}', e.subscriptions) FROM enqueued e WHERE e.n > 0) AS notified
       FROM call`;
}

const INSERT_COMPLETED = withCallCompletedOutbox(
  `INSERT INTO calls (id, organization_id, agent_id, status, completed_at, summary, duration_seconds, trace_context,
                      ${DETAIL_COLUMNS})
   SELECT $1::uuid, app_current_org(), $2::uuid, 'completed', now(), $3::text, $4::int, $9::bytea,
          ${detailValues('$10::text', '$2::uuid')}
    WHERE $5::text IS NULL OR EXISTS (SELECT 1 FROM reserved)
   ${RETURNING}`,
  reservedKeys('SELECT app_current_org(), $8::text, $5::text, $6::bytea, $1::uuid, $7::smallint WHERE $5::text IS NOT NULL'),
);

/**
 * A call that finished before it was recorded: created completed, with its
 * call.completed deliveries (the outbox), in one statement. Throws KeyHeld
 * when `idempotency` names a key its caller already holds (nothing
 * written, so the COMMIT behind it commits nothing).
 */
export async function insertCompletedCall(
  db: Queryable,
  input: {
    agentId: string | null;
    summary: string;
    durationSeconds: number;
    details?: CallDetails | undefined;
    /** Unset: a new trace. */
    traceContext?: StoredTraceContext | undefined;
    idempotency?: KeyReservation | null;
  },
): Promise<CompletedCall> {
  const { rows } = await db.query<CompletedCall>(INSERT_COMPLETED, [
    randomUUID(),
    input.agentId,
    input.summary,
    input.durationSeconds,
    ...keyParameters(input.idempotency),
    input.traceContext ?? newTraceContext(),
    JSON.stringify(input.details ?? {}),
  ]);
  if (!rows[0]) throw new KeyHeld();
  return completedCall(rows[0]);
}

/**
 * The batch statement (insertCompletedCalls) in its two shapes, each built
 * once: with the calls' Idempotency-Keys, and without (the usual batch), which
 * leaves out the reservation's CTE and its arrays. Both leave out a call
 * naming an agent or location the organization does not have.
 *
 * The calls arrive as arrays, one element per call; each call's details are
 * read as jsonb once (`details_jsonb`), not once per column.
 */
function batchStatement(keyed: boolean): string {
  const keyArrays = keyed ? ', $7::text[], $8::bytea[], $9::smallint[], $10::text[]' : '';
  const keyColumns = keyed ? ', key, fingerprint, response_status, caller' : '';
  const input = `input AS (
       SELECT i.* FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::int[], $5::bytea[], $6::text[], $6::text[]::jsonb[]${keyArrays})
                    AS i(id, agent_id, summary, duration_seconds, trace_context, details, details_jsonb${keyColumns})
        WHERE (i.agent_id IS NULL
               OR EXISTS (SELECT 1 FROM agents a WHERE a.organization_id = app_current_org() AND a.id = i.agent_id))
          AND (i.details_jsonb->>'location_id' IS NULL
               OR EXISTS (SELECT 1 FROM locations l WHERE l.organization_id = app_current_org()
                                                     AND l.id = (i.details_jsonb->>'location_id')::uuid))
     )`;
  return withCallCompletedOutbox(
    `INSERT INTO calls (id, organization_id, agent_id, status, completed_at, summary, duration_seconds, trace_context,
                          ${DETAIL_COLUMNS})
     SELECT i.id, app_current_org(), i.agent_id, 'completed', now(), i.summary, i.duration_seconds, i.trace_context,
            ${detailValues('i.details', 'i.agent_id', 'i.details_jsonb')}
       FROM input i
      ${keyed ? 'WHERE i.key IS NULL OR i.id IN (SELECT call_id FROM reserved)' : ''}
     ${RETURNING}`,
    keyed
      ? `${input},
     ${reservedKeys('SELECT app_current_org(), i.caller, i.key, i.fingerprint, i.id, i.response_status FROM input i WHERE i.key IS NOT NULL')}`
      : input,
  );
}

const BATCH = batchStatement(false);
const KEYED_BATCH = batchStatement(true);

/**
 * Many completed calls of the current organization (group commit,
 * completed-call-batches.ts) with their deliveries and one NOTIFY, in one
 * statement. The ids come from the caller so that each row finds its
 * request. A call naming an agent or location the organization does not have is left
 * out instead of failing the statement (its id is missing from the result),
 * and so is one whose idempotency key (`keys[i]` of `callers[i]`, null for
 * none) its caller already holds; the foreign keys still guard an agent or location deleted
 * meanwhile.
 */
export async function insertCompletedCalls(
  db: Queryable,
  input: {
    ids: string[];
    agentIds: (string | null)[];
    summaries: string[];
    durationsSeconds: number[];
    callers: (string | null)[];
    keys: (string | null)[];
    fingerprints: (Buffer | null)[];
    statuses: (number | null)[];
    traceContexts: StoredTraceContext[];
    details: CallDetails[];
  },
): Promise<CompletedCall[]> {
  const calls = [
    input.ids,
    input.agentIds,
    input.summaries,
    input.durationsSeconds,
    input.traceContexts,
    input.details.map((details) => JSON.stringify(details)),
  ];
  const keyed = input.keys.some((key) => key !== null);
  const { rows } = await db.query<CompletedCall>(
    keyed ? KEYED_BATCH : BATCH,
    keyed ? [...calls, input.keys, input.fingerprints, input.statuses, input.callers] : calls,
  );
  return rows.map(completedCall);
}

const COMPLETE_IN_PROGRESS = withCallCompletedOutbox(
  `UPDATE calls SET status = 'completed', completed_at = now(), summary = $2::text, duration_seconds = $3::int,
                    trace_context = coalesce($8::bytea, trace_context, $9::bytea),
                    ${completionDetailAssignments('$10::text')}
    WHERE id = $1::uuid AND status = 'in_progress' AND ($4::text IS NULL OR EXISTS (SELECT 1 FROM reserved))
   ${RETURNING}`,
  reservedKeys('SELECT app_current_org(), $7::text, $4::text, $5::bytea, $1::uuid, $6::smallint WHERE $4::text IS NOT NULL'),
);

/**
 * Completes an in-progress call and writes its call.completed deliveries, in
 * one statement. The status condition makes completion happen once: of two
 * concurrent requests one updates the row, the other gets nothing.
 *
 * With `idempotency`, the call is updated only if its key was stored.
 * Nothing returned means nothing to keep: the key was held, or the call is
 * missing or completed (then the key row was written for nothing), so the
 * caller must roll back.
 */
export async function completeInProgressCall(
  db: Queryable,
  input: {
    id: string;
    summary: string;
    durationSeconds: number;
    /** Each detail given replaces the stored one. */
    details?: CallDetails | undefined;
    traceContext: CompletionTraceContext;
    idempotency?: KeyReservation | null;
  },
): Promise<CompletedCall | undefined> {
  const { rows } = await db.query<CompletedCall>(COMPLETE_IN_PROGRESS, [
    input.id,
    input.summary,
    input.durationSeconds,
    ...keyParameters(input.idempotency),
    input.traceContext.received ?? null,
    input.traceContext.fresh,
    JSON.stringify(input.details ?? {}),
  ]);
  return rows[0] && completedCall(rows[0]);
}

type OutboxRow = CompletedCall & { notified?: unknown };

/** Only the call's own columns (the outbox statement returns more). */
function completedCall(row: OutboxRow): CompletedCall {
  const { notified: _n, ...call } = row;
  return call;
}
