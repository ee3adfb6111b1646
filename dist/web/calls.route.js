import { getCall, listAgents, listCallsPage } from '../calls/calls.service.js';
import { ValidationProblem } from '../http/problem-details.plugin.js';
import { isUuid, pathId } from './forms.js';
import { sendPage } from './layout.js';
import { callPage } from './pages/call.page.js';
import { callsPage } from './pages/calls.page.js';
import { sectionAccess } from './signed-in.js';
export const CALLS_PER_PAGE = 25;
/** A page cursor is the last id of the previous page; anything else is a 400 page, not a database error. */
export function pageCursor(value) {
    if (value === undefined || value === '')
        return undefined;
    if (typeof value === 'string' && isUuid(value))
        return value;
    throw new ValidationProblem([{ field: 'cursor', message: 'is not a cursor from a previous page' }]);
}
export function callPages(csrf) {
    return async function registerCallPages(app) {
        const { page } = sectionAccess(csrf, 'calls');
        const hide = { schema: { hide: true } };
        const agentNames = async (organizationId) => new Map((await listAgents(app.db, organizationId)).map((a) => [a.id, a.name]));
        app.get('/ui/calls', hide, async (request, reply) => {
            const ctx = await page(request, reply);
            if (!ctx)
                return reply;
            const cursor = pageCursor(request.query.cursor);
            const [{ calls, nextCursor }, agents] = await Promise.all([
                listCallsPage(app.db, ctx.organizationId, { limit: CALLS_PER_PAGE, ...(cursor ? { cursor } : {}) }),
                agentNames(ctx.organizationId),
            ]);
            return sendPage(reply, 200, callsPage({ nav: ctx.nav, calls, agents, nextCursor, paged: cursor !== undefined }));
        });
        app.get('/ui/calls/:id', hide, async (request, reply) => {
            const ctx = await page(request, reply);
            if (!ctx)
                return reply;
            const call = await getCall(app.db, ctx.organizationId, pathId(request.params.id, 'call'));
            const agentName = call.agent_id ? (await agentNames(ctx.organizationId)).get(call.agent_id) : undefined;
            return sendPage(reply, 200, callPage({ nav: ctx.nav, call, agentName }));
        });
    };
}
//# sourceMappingURL=calls.route.js.map