// Calls and agents of one organization. Completing a call and enqueueing its
// call.completed deliveries happen in one transaction (the outbox), so a
// completed call without its deliveries, or the reverse, cannot exist.
import * as errors from '../errors.js';
import { hashToken } from '../auth/tokens.js';
import { FOREIGN_KEY_VIOLATION, violatedConstraint } from '../db/pg-errors.js';
import { withOrg } from '../db/with-org.js';
import { ValidationProblem } from '../http/problem-details.plugin.js';
import { enqueueCallCompleted } from '../webhooks/outbox.js';
import { insertAgent, listAgents as listAgentRows } from './agents.queries.js';
import { callCompletedEvent } from './call-event.js';
import { completeInProgressCall, findCall, insertCall, insertCompletedCall, listCalls, listRecentCompletedCalls, readRecentCallsAsPlatform, } from './calls.queries.js';
export const SUMMARY_MAX_LENGTH = 10_000;
export const DURATION_MAX_SECONDS = 2_147_483_647;
export function callView(call) {
    return {
        id: call.id,
        organization_id: call.organization_id,
        agent_id: call.agent_id,
        status: call.status,
        created_at: call.created_at.toISOString(),
        completed_at: call.completed_at?.toISOString() ?? null,
        duration_seconds: call.duration_seconds,
        summary: call.summary,
    };
}
/** The same rules the HTTP schema states, for callers that do not pass through it (the CLI). */
export function checkCompletion(input) {
    const problems = [];
    if (typeof input.summary !== 'string' || input.summary.length < 1 || input.summary.length > SUMMARY_MAX_LENGTH) {
        problems.push({ field: 'summary', message: `must be 1 to ${SUMMARY_MAX_LENGTH} characters` });
    }
    const duration = input.duration_seconds;
    if (typeof duration !== 'number' || !Number.isInteger(duration) || duration < 0 || duration > DURATION_MAX_SECONDS) {
        problems.push({ field: 'duration_seconds', message: 'must be a whole number of seconds, 0 or more' });
    }
    if (problems.length)
        throw new ValidationProblem(problems);
    return { summary: input.summary, duration_seconds: duration };
}
function unknownAgent(error) {
    if (violatedConstraint(error, FOREIGN_KEY_VIOLATION) === 'calls_agent_fkey') {
        throw new ValidationProblem([{ field: 'agent_id', message: 'is not an agent of this organization' }]);
    }
    throw error;
}
/**
 * POST /calls: an in-progress call, or (given summary and duration together)
 * a call recorded already completed, which fires call.completed at once.
 */
export async function createCall(pool, organizationId, input) {
    const agentId = input.agent_id ?? null;
    const hasSummary = input.summary !== undefined;
    const hasDuration = input.duration_seconds !== undefined;
    if (hasSummary !== hasDuration) {
        const missing = hasSummary ? 'duration_seconds' : 'summary';
        throw new ValidationProblem([{ field: missing, message: 'is required when a completed call is recorded (give summary and duration_seconds together)' }]);
    }
    return withOrg(pool, organizationId, async (db) => {
        if (!hasSummary)
            return callView(await insertCall(db, { agentId }));
        const completion = checkCompletion(input);
        const call = await insertCompletedCall(db, { agentId, summary: completion.summary, durationSeconds: completion.duration_seconds });
        await enqueueCallCompleted(db, call);
        return callView(call);
    }).catch(unknownAgent);
}
/** POST /calls/{id}/complete: completes once; a second completion is a conflict. */
export async function completeCall(pool, organizationId, callId, input) {
    const completion = checkCompletion(input);
    return withOrg(pool, organizationId, async (db) => {
        const call = await completeInProgressCall(db, { id: callId, summary: completion.summary, durationSeconds: completion.duration_seconds });
        if (!call) {
            const existing = await findCall(db, callId);
            if (!existing)
                throw new errors.CALL_NOT_FOUND(callId);
            throw new errors.CALL_ALREADY_COMPLETED(callId);
        }
        await enqueueCallCompleted(db, call);
        return callView(call);
    });
}
export async function getCall(pool, organizationId, callId) {
    const call = await withOrg(pool, organizationId, (db) => findCall(db, callId));
    if (!call)
        throw new errors.CALL_NOT_FOUND(callId);
    return callView(call);
}
/** One page, newest first; `nextCursor` is set when more may follow. */
export async function listCallsPage(pool, organizationId, input) {
    return withOrg(pool, organizationId, async (db) => {
        if (input.cursor !== undefined && !(await findCall(db, input.cursor))) {
            throw new ValidationProblem([{ field: 'cursor', message: 'is not a cursor from a previous page' }]);
        }
        const calls = await listCalls(db, {
            limit: input.limit + 1,
            ...(input.cursor ? { afterId: input.cursor } : {}),
            ...(input.status ? { status: input.status } : {}),
        });
        const page = calls.slice(0, input.limit);
        return { calls: page.map(callView), nextCursor: calls.length > input.limit ? page.at(-1).id : null };
    });
}
/** GET /calls/recent: completed calls, newest first, in the shape of the call.completed event. */
export async function recentCalls(pool, organizationId, limit) {
    const calls = await withOrg(pool, organizationId, (db) => listRecentCompletedCalls(db, limit));
    return calls.map(callCompletedEvent);
}
/** Tokens are 47 characters and secrets 47: anything far longer is not ours and is not worth hashing. */
const MAX_TOKEN_LENGTH = 512;
const MAX_SECRET_LENGTH = 500;
const NO_DIGEST = Buffer.alloc(32);
/**
 * GET /calls/recent for a platform: its three credentials checked and the
 * calls read in one statement (readRecentCallsAsPlatform). The body is the
 * JSON text PostgreSQL wrote; refused credentials come back as the outcome.
 */
export async function recentCallsForPlatform(pool, credentials, scope, limit) {
    if (credentials.token.length > MAX_TOKEN_LENGTH)
        return { outcome: 'token_invalid', body: null };
    return readRecentCallsAsPlatform(pool, {
        tokenHash: hashToken(credentials.token),
        clientId: credentials.clientId,
        // An over-long secret is wrong, but the token is still checked first (same order as the guard).
        secretHash: credentials.clientSecret.length > MAX_SECRET_LENGTH ? NO_DIGEST : hashToken(credentials.clientSecret),
        scope,
        limit,
    });
}
export async function createAgent(pool, organizationId, name) {
    const trimmed = name.trim();
    if (trimmed.length < 1 || trimmed.length > 200)
        throw new ValidationProblem([{ field: 'name', message: 'must be 1 to 200 characters' }]);
    return withOrg(pool, organizationId, (db) => insertAgent(db, trimmed));
}
export function listAgents(pool, organizationId) {
    return withOrg(pool, organizationId, (db) => listAgentRows(db));
}
//# sourceMappingURL=calls.service.js.map