// The calls pages (docs/interface.md §14): the organization's calls, newest first, and
// one call in full with its webhook deliveries and Redeliver. Through the
// calls and deliveries services.
import type { FastifyInstance } from 'fastify';
import { Readable } from 'node:stream';
import { callCsvLine, CALLS_CSV_HEADER, csvLine } from '../calls/calls-csv.ts';
import * as errors from '../errors.ts';
import { getCall, listCallsPage, streamCalls } from '../calls/call-reads.service.ts';
import { listAgents } from '../calls/agents.service.ts';
import { listDeliveriesOfCall } from '../webhooks/deliveries.service.ts';
import { parseCallFilters } from './call-filters.ts';
import { ValidationProblem } from '../http/problem-details.plugin.ts';
import type { Csrf } from '../crypto/csrf.ts';
import { getVisibleSubscription, type SubscriptionView } from '../webhooks/subscriptions.service.ts';
import { isUuid, noticeFor, pathId } from './forms.ts';
import { sendPage } from './layout.ts';
import { callPage } from './pages/call.page.ts';
import { callsPage } from './pages/calls.page.ts';
import { REDELIVER_PROBLEMS, REDELIVERED_NOTICE, redeliverRoute } from './redeliver-route.ts';
import { sectionAccess, signedIn } from './signed-in.ts';

export const CALLS_PER_PAGE = 25;

/** A page cursor is the last id of the previous page; anything else is a 400 page, not a database error. */
export function pageCursor(value: unknown): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value === 'string' && isUuid(value)) return value;
  throw new ValidationProblem([{ field: 'cursor', message: 'is not a cursor from a previous page' }]);
}

export function callPages(csrf: Csrf) {
  return async function registerCallPages(app: FastifyInstance) {
    const access = sectionAccess(csrf, 'calls');
    const agentNames = async (organizationId: string) => new Map((await listAgents(app.db, organizationId)).map((a) => [a.id, a.name]));

    app.get<{ Querystring: Record<string, unknown> }>('/ui/calls', access.route, async (request, reply) => {
      const ctx = signedIn(request);
      const cursor = pageCursor(request.query.cursor);
      const { values, filters, errors } = parseCallFilters(request.query);
      const agents = await agentNames(ctx.organizationId);
      if (Object.keys(errors).length > 0) {
        return sendPage(
          reply,
          400,
          callsPage({ nav: ctx.nav, calls: [], agents, nextCursor: null, paged: false, filters: values, errors }),
        );
      }
      const { calls, nextCursor } = await listCallsPage(app.db, ctx.organizationId, {
        ...filters,
        limit: CALLS_PER_PAGE,
        ...(cursor ? { cursor } : {}),
      });
      return sendPage(
        reply,
        200,
        callsPage({ nav: ctx.nav, calls, agents, nextCursor, paged: cursor !== undefined, filters: values, errors }),
      );
    });

    // The filtered list as CSV, streamed batch by batch (never built whole in memory).
    app.get<{ Querystring: Record<string, unknown> }>('/ui/calls.csv', access.route, async (request, reply) => {
      const ctx = signedIn(request);
      const { filters, errors } = parseCallFilters(request.query);
      if (Object.keys(errors).length > 0) {
        throw new ValidationProblem(Object.entries(errors).map(([field, message]) => ({ field, message })));
      }
      const agents = await agentNames(ctx.organizationId);
      const organizationId = ctx.organizationId;
      async function* lines() {
        yield csvLine(CALLS_CSV_HEADER);
        for await (const batch of streamCalls(app.db, organizationId, filters)) {
          yield batch.map((call) => callCsvLine(call, call.agent_id ? (agents.get(call.agent_id) ?? null) : null)).join('');
        }
      }
      const stamp = new Date().toISOString().slice(0, 10);
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="calls-${stamp}.csv"`)
        .header('cache-control', 'no-store')
        .header('x-content-type-options', 'nosniff')
        .send(Readable.from(lines()));
    });

    app.get<{ Params: { id: string }; Querystring: { done?: unknown; problem?: unknown } }>(
      '/ui/calls/:id',
      access.route,
      async (request, reply) => {
        const ctx = signedIn(request);
        const call = await getCall(app.db, ctx.organizationId, pathId(request.params.id, 'call'));
        const agentName = call.agent_id ? (await agentNames(ctx.organizationId)).get(call.agent_id) : undefined;
        const deliveries = await listDeliveriesOfCall(app.db, ctx.principal, call.id);
        // A disabled subscription's reason says what to do before its delivery can be sent again.
        const disabled = new Map<string, SubscriptionView>();
        for (const d of deliveries) {
          if (d.not_redeliverable !== 'subscription_disabled' || disabled.has(d.subscription_id)) continue;
          try {
            disabled.set(d.subscription_id, await getVisibleSubscription(app.db, ctx.principal, d.subscription_id));
          } catch (error) {
            // Deleted since the list was read (its deliveries with it): the row says only that it is disabled.
            if (!(error instanceof errors.WEBHOOK_SUBSCRIPTION_NOT_FOUND)) throw error;
          }
        }
        const message = noticeFor(REDELIVERED_NOTICE, request.query.done);
        const problem = noticeFor(REDELIVER_PROBLEMS, request.query.problem);
        return sendPage(
          reply,
          200,
          callPage({
            nav: ctx.nav,
            call,
            agentName,
            deliveries,
            disabled,
            ...(message ? { notice: message } : {}),
            ...(problem ? { problem } : {}),
          }),
        );
      },
    );

    redeliverRoute(app, { base: '/ui/calls', what: 'call', access });
  };
}
