// Reading calls of one organization: one call, a page of GET /calls (and the
// MCP tool search_calls) with its filters, and every matching call in batches
// for the CSV export.
import type { Static } from '@sinclair/typebox';
import * as errors from '../errors.ts';
import { parseSince } from '../audit/audit-events.service.ts';
import type { Pool } from '../db/pool.ts';
import { withOrg, withOrgOneStatement } from '../db/with-org.ts';
import { ValidationProblem } from '../http/problem-details.plugin.ts';
import { callView, type Call, type CallView } from './call.ts';
import { numberFromQuery } from './call-details.ts';
import { findCall, listCalls, newestCalls, type CallFilters } from './calls.queries.ts';
import type { ListCallsQuery } from './calls.schemas.ts';

export async function getCall(pool: Pool, organizationId: string, callId: string): Promise<CallView> {
  const call = await withOrg(pool, organizationId, (db) => findCall(db, callId));
  if (!call) throw new errors.CALL_NOT_FOUND(callId);
  return callView(call);
}

/**
 * The filters of `input` by name: a caller's object may carry more (a whole
 * query string once did, docs/security.md, third review, finding 2), and
 * nothing but a filter may reach listCalls.
 */
function namedFilters(input: CallFilters): CallFilters {
  const { status, agentId, from, before, number, fromNumber, toNumber, direction, locationId } = input;
  return { status, agentId, from, before, number, fromNumber, toNumber, direction, locationId };
}

/** One page, newest first; `nextCursor` is set when more may follow. */
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

/**
 * GET /calls's query as the filters of listCallsPage, by name (the route and
 * the MCP tool search_calls take the same parameters): numbers to E.164,
 * since/until to instants, each refusal naming its parameter.
 */
export function listQueryFilters(query: Static<typeof ListCallsQuery>): { limit: number; cursor: string | undefined } & CallFilters {
  return {
    limit: query.limit,
    cursor: query.cursor,
    status: query.status,
    direction: query.direction,
    agentId: query.agent_id,
    locationId: query.location_id,
    number: numberFromQuery('number', query.number),
    fromNumber: numberFromQuery('from_number', query.from_number),
    toNumber: numberFromQuery('to_number', query.to_number),
    from: parseSince(query.since),
    before: parseSince(query.until, 'until'),
  };
}
