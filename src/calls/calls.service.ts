// Recording and completing calls of one organization (the write side; reads
// are call-reads.service.ts and recent-calls.service.ts). Completing a call and
// enqueueing its call.completed deliveries happen in one transaction (the
// outbox), so a completed call without its deliveries, or the reverse, cannot
// exist.
import * as errors from '../errors.ts';
import type { Pool } from '../db/pool.ts';
import { FOREIGN_KEY_VIOLATION, violatedConstraint } from '../db/pg-errors.ts';
import { withOrg } from '../db/with-org.ts';
import { NO_CACHES, type Caches } from '../cache/caches.ts';
import { tags } from '../cache/tags.ts';
import { ValidationProblem } from '../http/problem-details.plugin.ts';
import { writeCompletedCall } from './completed-call-batches.ts';
import { idempotently, type Answer, type CallerKey } from './idempotency.ts';
import { KeyHeld } from './idempotency.queries.ts';
import { findCall, insertCall } from './calls.queries.ts';
import { callDetails, type CallDetails, type CallDetailsInput } from './call-details.ts';
import { DURATION_MAX_SECONDS, SUMMARY_MAX_LENGTH } from './call-limits.ts';
import { completeInProgressCall, type CompletionTraceContext } from './completed-calls.queries.ts';
import { newTraceContext, type StoredTraceContext } from '../tracing/trace-context.ts';
import { callView, type Call, type CallView } from './call.ts';

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
