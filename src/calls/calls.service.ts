// Calls and agents of one organization. Completing a call and enqueueing its
// call.completed deliveries happen in one transaction (the outbox), so a
// completed call without its deliveries, or the reverse, cannot exist.
import * as errors from '../errors.ts';
import { hashToken, OAUTH_TOKEN_MAX_LENGTH } from '../auth/tokens.ts';
import type { Pool } from '../db/pool.ts';
import { FOREIGN_KEY_VIOLATION, violatedConstraint } from '../db/pg-errors.ts';
import { withOrg, withOrgOneStatement } from '../db/with-org.ts';
import { NO_CACHES, readPrincipalAndBody, type Caches, type OrganizationBody } from '../cache/caches.ts';
import { tags } from '../cache/tags.ts';
import { checkPlatformAccess, type PlatformCredentials, type PlatformRefusal } from '../oauth/platform-guard.ts';
import type { ActiveAccessToken } from '../oauth/tokens.queries.ts';
import { ACCESS_TOKENS, accessTokenTags } from '../oauth/tokens.service.ts';
import { ValidationProblem } from '../http/problem-details.plugin.ts';
import { writeCompletedCall } from './completed-call-batches.ts';
import { idempotently, type Answer, type CallerKey } from './idempotency.ts';
import { KeyHeld } from './idempotency.queries.ts';
import {
  findCall,
  insertCall,
  listCalls,
  newestCalls,
  readRecentCallsForToken,
  type CallFilters,
  type CallFiltersObject,
} from './calls.queries.ts';
import { callDetails, type CallDetails, type CallDetailsInput } from './call-details.ts';
import { completeInProgressCall, type CompletionTraceContext } from './completed-calls.queries.ts';
import { newTraceContext, type StoredTraceContext } from '../tracing/trace-context.ts';
import type { Call } from './call.ts';

export const SUMMARY_MAX_LENGTH = 10_000;
export const DURATION_MAX_SECONDS = 2_147_483_647;

export interface CallView extends Omit<Call, 'created_at' | 'completed_at'> {
  created_at: string;
  completed_at: string | null;
}

export function callView(call: Call): CallView {
  return {
    id: call.id,
    organization_id: call.organization_id,
    agent_id: call.agent_id,
    status: call.status,
    created_at: call.created_at.toISOString(),
    completed_at: call.completed_at?.toISOString() ?? null,
    duration_seconds: call.duration_seconds,
    summary: call.summary,
    direction: call.direction,
    from_number: call.from_number,
    to_number: call.to_number,
    agent_name: call.agent_name,
    location_id: call.location_id,
    location_name: call.location_name,
    recording_url: call.recording_url,
    transcript: call.transcript,
    metadata: call.metadata,
    url: call.url,
  };
}

/**
 * POST /calls's first answer for a call it created in progress, given again:
 * the call as it was answered then. Its id, organization, agent and creation
 * time never change; completing it changes only the fields set back here.
 */
function asCreatedInProgress(call: Call): CallView {
  return { ...callView(call), status: 'in_progress', completed_at: null, duration_seconds: null, summary: null };
}

export interface Completion {
  summary: string;
  duration_seconds: number;
}

/** The same rules the HTTP schema states, for callers that do not pass through it (the CLI). */
export function checkCompletion(input: { summary: unknown; duration_seconds: unknown }): Completion {
  const problems = [];
  if (typeof input.summary !== 'string' || input.summary.length < 1 || input.summary.length > SUMMARY_MAX_LENGTH) {
    problems.push({ field: 'summary', message: `must be 1 to ${SUMMARY_MAX_LENGTH} characters` });
  }
  const duration = input.duration_seconds;
  if (typeof duration !== 'number' || !Number.isInteger(duration) || duration < 0 || duration > DURATION_MAX_SECONDS) {
    problems.push({ field: 'duration_seconds', message: 'must be a whole number of seconds, 0 or more' });
  }
  if (problems.length) throw new ValidationProblem(problems);
  return { summary: input.summary as string, duration_seconds: duration as number };
}

function unknownAgent(error: unknown): never {
  const constraint = violatedConstraint(error, FOREIGN_KEY_VIOLATION);
  if (constraint === 'calls_agent_fkey') {
    throw new ValidationProblem([{ field: 'agent_id', message: 'is not an agent of this organization' }]);
  }
  if (constraint === 'calls_location_fkey') {
    throw new ValidationProblem([{ field: 'location_id', message: 'is not a location of this organization' }]);
  }
  throw error;
}

type NewCall = { agent_id?: string | null; summary?: string; duration_seconds?: number } & CallDetailsInput;

/** A request's fields for its fingerprint: the details only when it gave some, so older requests keep theirs. */
function fingerprintFields(fields: unknown[], details: CallDetails | undefined): unknown[] {
  return details === undefined ? fields : [...fields, details];
}

/** recordCall without an Idempotency-Key, outside a serve process (no caches): the call (the CLI's demo, tests), in a new trace. */
export async function createCall(pool: Pool, organizationId: string, input: NewCall): Promise<CallView> {
  return (await recordCall(pool, NO_CACHES, organizationId, input, undefined, newTraceContext())).body;
}

/**
 * POST /calls: an in-progress call, or (given summary and duration together)
 * a call recorded already completed, which fires call.completed at once.
 * Completed calls of one organization arriving together are committed
 * together (completed-call-batches.ts); each is answered after its commit.
 * With an idempotency key, once per key (idempotency.ts).
 */
export async function recordCall(
  pool: Pool,
  caches: Caches,
  organizationId: string,
  input: NewCall,
  idempotencyKey: CallerKey | undefined,
  traceContext: StoredTraceContext,
): Promise<Answer<CallView>> {
  const agentId = input.agent_id ?? null;
  const hasSummary = input.summary !== undefined;
  const hasDuration = input.duration_seconds !== undefined;
  if (hasSummary !== hasDuration) {
    const missing = hasSummary ? 'duration_seconds' : 'summary';
    throw new ValidationProblem([
      { field: missing, message: 'is required when a completed call is recorded (give summary and duration_seconds together)' },
    ]);
  }
  const completion = hasSummary ? checkCompletion(input as Completion) : null;
  const details = callDetails(input);
  const request = {
    key: idempotencyKey,
    endpoint: 'POST /calls',
    fields: fingerprintFields([agentId, completion?.summary ?? null, completion?.duration_seconds ?? null], details),
    status: 201,
    // A completed call never changes: the call as it is now is the first answer.
    rebuild: completion ? callView : asCreatedInProgress,
  };
  return idempotently(pool, organizationId, request, async (reservation) => {
    if (!completion) {
      return withOrg(pool, organizationId, async (db) =>
        callView(await insertCall(db, { agentId, details, traceContext, idempotency: reservation })),
      ).catch(unknownAgent);
    }
    const call = callView(
      await writeCompletedCall(pool, organizationId, {
        agentId,
        summary: completion.summary,
        durationSeconds: completion.duration_seconds,
        details,
        traceContext,
        idempotency: reservation,
      }).catch(unknownAgent),
    );
    // Committed: this process's /calls/recent answers include it from now on.
    caches.evict([tags.calls(organizationId)]);
    return call;
  });
}

/**
 * POST /calls/{id}/complete: completes once; a second completion is a
 * conflict. With an idempotency key, once per key (idempotency.ts): a retry
 * of a completion that succeeded gets its answer again, not the conflict.
 * The completion's trace context, when its request carried one, replaces the
 * call's (CompletionTraceContext).
 */
export async function completeCall(
  pool: Pool,
  caches: Caches,
  organizationId: string,
  callId: string,
  input: Completion & CallDetailsInput,
  idempotencyKey: CallerKey | undefined,
  traceContext: CompletionTraceContext,
): Promise<Answer<CallView>> {
  const completion = checkCompletion(input);
  const details = callDetails(input);
  const request = {
    key: idempotencyKey,
    endpoint: `POST /calls/${callId.toLowerCase()}/complete`,
    fields: fingerprintFields([completion.summary, completion.duration_seconds], details),
    status: 200,
    rebuild: callView,
  };
  return idempotently(pool, organizationId, request, async (reservation) => {
    const completed = await withOrg(pool, organizationId, async (db) => {
      const call = await completeInProgressCall(db, {
        id: callId,
        summary: completion.summary,
        durationSeconds: completion.duration_seconds,
        details,
        traceContext,
        idempotency: reservation,
      });
      if (!call) {
        // Thrown inside the transaction, so a key row the statement wrote for nothing is rolled back.
        const existing = await findCall(db, callId);
        const refusal = !existing
          ? new errors.CALL_NOT_FOUND(callId)
          : existing.status === 'completed'
            ? new errors.CALL_ALREADY_COMPLETED(callId)
            : undefined;
        if (reservation) throw new KeyHeld(refusal);
        throw refusal ?? new errors.CALL_ALREADY_COMPLETED(callId);
      }
      return callView(call);
    }).catch(unknownAgent);
    caches.evict([tags.calls(organizationId)]);
    return completed;
  });
}

export async function getCall(pool: Pool, organizationId: string, callId: string): Promise<CallView> {
  const call = await withOrg(pool, organizationId, (db) => findCall(db, callId));
  if (!call) throw new errors.CALL_NOT_FOUND(callId);
  return callView(call);
}

/** One page, newest first; `nextCursor` is set when more may follow. */
/**
 * The filters of `input` by name: a caller's object may carry more (a whole
 * query string once did, docs/security.md, third review, finding 2), and
 * nothing but a filter may reach listCalls.
 */
function namedFilters(input: CallFilters): CallFilters {
  const { status, agentId, from, before, number, fromNumber, toNumber, direction, locationId } = input;
  return { status, agentId, from, before, number, fromNumber, toNumber, direction, locationId };
}

export async function listCallsPage(
  pool: Pool,
  organizationId: string,
  input: { limit: number; cursor?: string | undefined } & CallFilters,
): Promise<{ calls: CallView[]; nextCursor: string | null }> {
  const { limit, cursor } = input;
  const filters = namedFilters(input);
  const page = (calls: Call[]) => {
    const shown = calls.slice(0, limit);
    return { calls: shown.map(callView), nextCursor: calls.length > limit ? shown.at(-1)!.id : null };
  };
  if (cursor === undefined && Object.values(filters).every((value) => value === undefined)) {
    // The first page, unfiltered (an assistant's list_recent_calls): one round trip, planned once.
    return page(await withOrgOneStatement(pool, organizationId, (db) => newestCalls(db, limit + 1), { genericPlan: true }));
  }
  return withOrg(pool, organizationId, async (db) => {
    if (cursor !== undefined && !(await findCall(db, cursor))) {
      throw new ValidationProblem([{ field: 'cursor', message: 'is not a cursor from a previous page' }]);
    }
    return page(await listCalls(db, { ...filters, limit: limit + 1, afterId: cursor }));
  });
}

export const EXPORT_BATCH = 500;

/**
 * Every call matching `filters`, newest first, read in keyset batches of
 * EXPORT_BATCH, each in its own short transaction: an export of any size holds
 * one batch in memory and no connection between batches (for the CSV export).
 */
export async function* streamCalls(pool: Pool, organizationId: string, filters: CallFilters): AsyncGenerator<CallView[]> {
  let afterId: string | undefined;
  for (;;) {
    const batch = await withOrg(pool, organizationId, (db) => listCalls(db, { ...namedFilters(filters), limit: EXPORT_BATCH, afterId }));
    if (batch.length > 0) yield batch.map(callView);
    if (batch.length < EXPORT_BATCH) return;
    afterId = batch.at(-1)!.id;
  }
}

/** /calls/recent's query: the limit and the trigger's filters. */
export interface RecentCallsRequest {
  limit: number;
  filters: CallFiltersObject;
  baseUrl: string;
}

/** /calls/recent bodies in the process caches, by organization, limit and filters: what that organization's row-level-security-bound read wrote. */
function recentCallsBody(request: RecentCallsRequest): OrganizationBody {
  const { direction, location_id, agent_id, min_duration_seconds } = request.filters;
  const filters = [direction, location_id, agent_id, min_duration_seconds].map((f) => f ?? '').join(':');
  return {
    slot: { cache: 'reads' },
    key: (organizationId) => `recent:${organizationId}:${request.limit}:${filters}`,
    tags: (organizationId) => [tags.calls(organizationId), tags.org(organizationId)],
  };
}

type PrincipalAndCalls = ActiveAccessToken & { body: string };

/** GET /calls/recent: the token's principal and the calls, or the first of the platform guard's checks the credentials fail. */
export type RecentCallsAnswer = { outcome: 'ok'; active: PrincipalAndCalls } | { outcome: PlatformRefusal };

/** The token's principal and its organization's body (readPrincipalAndBody, over readRecentCallsForToken). */
function principalAndCalls(
  pool: Pool,
  caches: Caches,
  tokenHash: Buffer,
  request: RecentCallsRequest,
): Promise<PrincipalAndCalls | undefined> {
  const principal = { slot: ACCESS_TOKENS, key: tokenHash.toString('hex'), tags: accessTokenTags };
  return readPrincipalAndBody(caches, principal, recentCallsBody(request), () => readRecentCallsForToken(pool, tokenHash, request));
}

/**
 * GET /calls/recent for a platform: the guard's own checks
 * (checkPlatformAccess) on the token's principal, read with the calls; the
 * body is the JSON text PostgreSQL wrote.
 */
export async function recentCallsForPlatform(
  pool: Pool,
  caches: Caches,
  credentials: PlatformCredentials,
  scope: string,
  request: RecentCallsRequest,
): Promise<RecentCallsAnswer> {
  if (credentials.token.length > OAUTH_TOKEN_MAX_LENGTH) return { outcome: 'token_invalid' };
  const found = await principalAndCalls(pool, caches, hashToken(credentials.token), request);
  const access = checkPlatformAccess(found, credentials, scope);
  return access.ok ? { outcome: 'ok', active: access.active } : { outcome: access.refusal };
}
