// The calls pages (DESIGN §6): the organization's calls, newest first, and
// one call in full. Read-only; through the calls service.
import type { FastifyInstance } from 'fastify';
import { getCall, listAgents, listCallsPage } from '../calls/calls.service.ts';
import { ValidationProblem } from '../http/problem-details.plugin.ts';
import type { Csrf } from './csrf.ts';
import { isUuid, pathId } from './forms.ts';
import { sendPage } from './layout.ts';
import { callPage } from './pages/call.page.ts';
import { callsPage } from './pages/calls.page.ts';
import { sectionAccess } from './signed-in.ts';

export const CALLS_PER_PAGE = 25;

/** A page cursor is the last id of the previous page; anything else is a 400 page, not a database error. */
export function pageCursor(value: unknown): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value === 'string' && isUuid(value)) return value;
  throw new ValidationProblem([{ field: 'cursor', message: 'is not a cursor from a previous page' }]);
}

export function callPages(csrf: Csrf) {
  return async function registerCallPages(app: FastifyInstance) {
    const { page } = sectionAccess(csrf, 'calls');
    const hide = { schema: { hide: true } };
    const agentNames = async (organizationId: string) =>
      new Map((await listAgents(app.db, organizationId)).map((a) => [a.id, a.name]));

    app.get<{ Querystring: { cursor?: unknown } }>('/ui/calls', hide, async (request, reply) => {
      const ctx = await page(request, reply);
      if (!ctx) return reply;
      const cursor = pageCursor(request.query.cursor);
      const [{ calls, nextCursor }, agents] = await Promise.all([
        listCallsPage(app.db, ctx.organizationId, { limit: CALLS_PER_PAGE, ...(cursor ? { cursor } : {}) }),
        agentNames(ctx.organizationId),
      ]);
      return sendPage(reply, 200, callsPage({ nav: ctx.nav, calls, agents, nextCursor, paged: cursor !== undefined }));
    });

    app.get<{ Params: { id: string } }>('/ui/calls/:id', hide, async (request, reply) => {
      const ctx = await page(request, reply);
      if (!ctx) return reply;
      const call = await getCall(app.db, ctx.organizationId, pathId(request.params.id, 'call'));
      const agentName = call.agent_id ? (await agentNames(ctx.organizationId)).get(call.agent_id) : undefined;
      return sendPage(reply, 200, callPage({ nav: ctx.nav, call, agentName }));
    });
  };
}
