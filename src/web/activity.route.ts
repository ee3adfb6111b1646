// GET /ui/activity: the organization's audit log for its owners and admins
// (a member gets the 403 page), with the API's filters, through the same
// service as GET /audit-events.
import type { FastifyInstance } from 'fastify';
import { listAuditEventsPage, parseSince, parseTypes, requireAuditReader } from '../audit/audit-events.service.ts';
import type { Csrf } from '../crypto/csrf.ts';
import type { FieldErrors } from './forms.ts';
import { ValidationProblem } from '../http/problem-details.plugin.ts';
import { listVisibleSubscriptions } from '../webhooks/subscriptions.service.ts';
import { pageCursor } from './calls.route.ts';
import { sendPage } from './layout.ts';
import { activityPage, type ActivityFilterValues } from './pages/activity.page.ts';
import { sectionAccess, signedIn } from './signed-in.ts';

export const EVENTS_PER_PAGE = 50;

/** The field's own message when a filter is refused, instead of the API's problem. */
function parsed<T>(parse: () => T, field: string, message: string, errors: FieldErrors): T | undefined {
  try {
    return parse();
  } catch (error) {
    if (!(error instanceof ValidationProblem)) throw error;
    errors[field] = message;
    return undefined;
  }
}

export function activityPages(csrf: Csrf) {
  return async function registerActivityPages(app: FastifyInstance) {
    const access = sectionAccess(csrf, 'activity');

    app.get<{ Querystring: Record<string, unknown> }>('/ui/activity', access.route, async (request, reply) => {
      const ctx = signedIn(request);
      requireAuditReader(ctx.principal);
      const cursor = pageCursor(request.query.cursor);
      const value = (name: string) => (typeof request.query[name] === 'string' ? (request.query[name] as string).trim() : '');
      const filters: ActivityFilterValues = { type: value('type'), since: value('since') };
      const errors: FieldErrors = {};
      const types = parsed(() => parseTypes(filters.type || undefined), 'type', 'Choose an event from the list.', errors);
      const since = parsed(() => parseSince(filters.since || undefined), 'since', 'Enter a date as YYYY-MM-DD.', errors);
      const links = { subscriptions: new Set((await listVisibleSubscriptions(app.db, ctx.principal)).map((s) => s.id)) };
      if (Object.keys(errors).length > 0) {
        return sendPage(reply, 400, activityPage({ nav: ctx.nav, events: [], links, nextCursor: null, paged: false, filters, errors }));
      }
      const { events, nextCursor } = await listAuditEventsPage(app.db, ctx.principal, {
        limit: EVENTS_PER_PAGE,
        cursor,
        types,
        since,
      });
      return sendPage(reply, 200, activityPage({ nav: ctx.nav, events, links, nextCursor, paged: cursor !== undefined, filters, errors }));
    });
  };
}
