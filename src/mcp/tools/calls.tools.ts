// The call tools: the calls of GET /calls and GET /calls/{id}, with their
// fields (call.ts callView), read through the same services.
import { Type } from '@sinclair/typebox';
import { CallSchema, ListCallsQuery } from '../../calls/calls.schemas.ts';
import type { CallView } from '../../calls/call.ts';
import { getCall, listCallsPage, listQueryFilters } from '../../calls/call-reads.service.ts';
import { Uuid } from '../../http/schemas.ts';
import { count, defineTool, READ_ONLY } from './tool.ts';

const Timestamp = (description: string) => Type.String({ format: 'date-time', description });
const CallPage = Type.Object({
  calls: Type.Array(CallSchema),
  next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'pass as cursor for the next page; null on the last' }),
});

function callLine(call: CallView): string {
  const length = call.duration_seconds === null ? 'in progress' : `${call.duration_seconds} s`;
  const summary = call.summary ? `: ${call.summary.length > 120 ? `${call.summary.slice(0, 117)}…` : call.summary}` : '';
  return `- ${call.created_at} (${length}, id ${call.id})${summary}`;
}

function pageText(calls: CallView[], nextCursor: string | null): string {
  if (calls.length === 0) return 'No calls match.';
  const more = nextCursor ? `\nMore calls follow: pass cursor ${nextCursor}.` : '';
  return `${count(calls.length, 'call')}, newest first:\n${calls.map(callLine).join('\n')}${more}`;
}

export const listRecentCalls = defineTool({
  name: 'list_recent_calls',
  title: 'Recent calls',
  description: "The organization's most recent calls, newest first, optionally only those since a time.",
  scope: 'calls:read',
  annotations: READ_ONLY,
  input: Type.Object(
    {
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10, description: 'how many calls (default 10)' })),
      since: Type.Optional(Timestamp('only calls created at or after this time (ISO 8601)')),
    },
    { additionalProperties: false },
  ),
  output: CallPage,
  async run(ctx, args) {
    const { calls, nextCursor } = await listCallsPage(ctx.pool, ctx.principal.organizationId, {
      limit: args.limit ?? 10,
      from: args.since === undefined ? undefined : new Date(args.since),
    });
    return { structured: { calls, next_cursor: nextCursor }, text: pageText(calls, nextCursor) };
  },
});

export const searchCalls = defineTool({
  name: 'search_calls',
  title: 'Search calls',
  description: 'Calls matching the filters of GET /calls, newest first, a page at a time.',
  scope: 'calls:read',
  annotations: READ_ONLY,
  // GET /calls's query parameters by the same names, read by the same function (call-reads.service.ts listQueryFilters).
  input: Type.Object(ListCallsQuery.properties, { additionalProperties: false }),
  output: CallPage,
  async run(ctx, args) {
    const { calls, nextCursor } = await listCallsPage(ctx.pool, ctx.principal.organizationId, listQueryFilters(args));
    return { structured: { calls, next_cursor: nextCursor }, text: pageText(calls, nextCursor) };
  },
});

export const getCallTool = defineTool({
  name: 'get_call',
  title: 'One call',
  description: 'One call by its id, with every field of GET /calls/{id}.',
  scope: 'calls:read',
  annotations: READ_ONLY,
  input: Type.Object({ id: Uuid }, { additionalProperties: false }),
  output: Type.Object({ call: CallSchema }),
  async run(ctx, args) {
    const call = await getCall(ctx.pool, ctx.principal.organizationId, args.id);
    return { structured: { call }, text: `Call ${call.id}, ${call.status}:\n${callLine(call)}` };
  },
});
