// The webhook pages (docs/interface.md §14): the organization's subscriptions with their
// status, and per subscription its delivery attempts, with redeliver,
// re-enable and delete. Everything goes through the webhooks services, as an
// organization user (who sees every client's subscriptions).
import { printableUrl } from '../url-characters.ts';
import type { FastifyInstance } from 'fastify';
import { canReadAuditLog, listAuditEventsPage } from '../audit/audit-events.service.ts';
import * as errors from '../errors.ts';
import { findClient } from '../oauth/clients.service.ts';
import { listDeliveriesPage } from '../webhooks/deliveries.service.ts';
import { deliveryHealth } from '../webhooks/delivery-health.service.ts';
import { recoverFailedDeliveries, recoverSinceProblem } from '../webhooks/recovery.service.ts';
import {
  getVisibleSubscription,
  listVisibleSubscriptions,
  reenableSubscription,
  removeSubscription,
  subscriptionUsage,
} from '../webhooks/subscriptions.service.ts';
import { pageCursor } from './calls.route.ts';
import type { Csrf } from '../crypto/csrf.ts';
import { noticeFor, pathId, text, type FormBody } from './forms.ts';
import { localValue } from './pages/delivery-health.ts';
import { sendPage } from './layout.ts';
import { webhookPage } from './pages/webhook.page.ts';
import { webhooksPage } from './pages/webhooks.page.ts';
import { deleteRecordRoutes } from './record-routes.ts';
import { REDELIVER_PROBLEMS, REDELIVERED_NOTICE, redeliverRoute } from './redeliver-route.ts';
import { sectionAccess, signedIn } from './signed-in.ts';

/** The newest audit events a subscription's page lists (the rest: the Activity page). */
const SUBSCRIPTION_EVENTS_SHOWN = 10;
/** Deliveries per page of a subscription's log, each with its attempts. */
export const DELIVERIES_PER_PAGE = 20;
const NOTICES = {
  deleted: 'Subscription deleted. Its pending deliveries will not be sent.',
  enabled: 'Subscription re-enabled. Its paused deliveries are being sent.',
  ...REDELIVERED_NOTICE,
};
const PROBLEMS = {
  ...REDELIVER_PROBLEMS,
  grant_ended: "The app's access this subscription was made under has ended: connect the app again; it subscribes anew.",
  invalid_url: 'This subscription’s URL holds a character no URL may hold: delete it; the app can subscribe a corrected URL.',
  limit: 'The organization already has as many active subscriptions as it may: delete one to make room, then re-enable this one.',
};
/** Why a recover time was refused, shown beside the field (fixed texts chosen by a code). */
const RECOVER_PROBLEMS = {
  invalid: 'Enter a date and time.',
  future: 'Choose a time in the past.',
  old: 'Choose a time within the last 30 days: older deliveries are no longer kept.',
};
const DAY_MS = 86_400_000;

/** "YYYY-MM-DDTHH:MM" (a datetime-local field, read as UTC) → a Date, or undefined. */
export function parseUtcLocal(value: string): Date | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(value)) return undefined;
  const date = new Date(`${value}Z`);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function recoveredNotice(query: { recovered?: unknown; more?: unknown }): string | undefined {
  if (typeof query.recovered !== 'string' || !/^\d{1,6}$/.test(query.recovered)) return undefined;
  const n = Number(query.recovered);
  const queued =
    n === 0
      ? 'No failed deliveries since that time: nothing was queued.'
      : `${n} failed ${n === 1 ? 'delivery' : 'deliveries'} queued: sent again now, with the same X-Delivery-Id.`;
  return query.more === '1' ? `${queued} More failed deliveries remain: press Recover again to queue the next batch.` : queued;
}

export function webhookPages(csrf: Csrf) {
  return async function registerWebhookPages(app: FastifyInstance) {
    const access = sectionAccess(csrf, 'webhooks');
    /** Platform (OAuth client) names for display; the id stands in for a client deleted since. */
    const clientNames = async (ids: string[]) => {
      const names = new Map<string, string>();
      for (const clientId of new Set(ids)) {
        const client = await findClient(app.db, clientId);
        if (client) names.set(clientId, client.name);
      }
      return names;
    };

    app.get<{ Querystring: { done?: unknown } }>('/ui/webhooks', access.route, async (request, reply) => {
      const ctx = signedIn(request);
      const subscriptions = await listVisibleSubscriptions(app.db, ctx.principal);
      const usage = await subscriptionUsage(app.db, ctx.principal.organizationId, app.config.webhookMaxSubscriptions);
      const clients = await clientNames(subscriptions.map((s) => s.client_id));
      const message = noticeFor(NOTICES, request.query.done);
      return sendPage(reply, 200, webhooksPage({ nav: ctx.nav, subscriptions, usage, clients, ...(message ? { notice: message } : {}) }));
    });

    app.get<{
      Params: { id: string };
      Querystring: { cursor?: unknown; done?: unknown; problem?: unknown; recover?: unknown; recovered?: unknown; more?: unknown };
    }>('/ui/webhooks/:id', access.route, async (request, reply) => {
      const ctx = signedIn(request);
      const subscriptionId = pathId(request.params.id, 'subscription');
      const cursor = pageCursor(request.query.cursor);
      const subscription = await getVisibleSubscription(app.db, ctx.principal, subscriptionId);
      const { waiting, deliveries, nextCursor } = await listDeliveriesPage(app.db, ctx.principal, subscriptionId, {
        limit: DELIVERIES_PER_PAGE,
        ...(cursor ? { cursor } : {}),
      });
      const clientName = (await clientNames([subscription.client_id])).get(subscription.client_id) ?? subscription.client_id;
      const health = await deliveryHealth(app.db, ctx.principal, subscriptionId);
      // Its own events, for those who may read the audit log.
      const activity = canReadAuditLog(ctx.principal)
        ? (await listAuditEventsPage(app.db, ctx.principal, { limit: SUBSCRIPTION_EVENTS_SHOWN, subjectId: subscriptionId })).events
        : undefined;
      const message = noticeFor(NOTICES, request.query.done) ?? recoveredNotice(request.query);
      const problem = noticeFor(PROBLEMS, request.query.problem);
      const recoverError = noticeFor(RECOVER_PROBLEMS, request.query.recover);
      // Suggested time: when the current failures began, or else 24 hours ago.
      const recoverSince = localValue(subscription.failing_since ?? new Date(Date.now() - DAY_MS).toISOString());
      return sendPage(
        reply,
        200,
        webhookPage({
          nav: ctx.nav,
          subscription,
          clientName,
          waiting,
          deliveries,
          nextCursor,
          paged: cursor !== undefined,
          health,
          ...(activity ? { activity } : {}),
          recoverSince,
          ...(recoverError ? { recoverError } : {}),
          ...(message ? { notice: message } : {}),
          ...(problem ? { problem } : {}),
        }),
      );
    });

    app.post<{ Params: { id: string }; Body: FormBody }>('/ui/webhooks/:id/enable', access.route, async (request, reply) => {
      const ctx = signedIn(request);
      const subscriptionId = pathId(request.params.id, 'subscription');
      try {
        await reenableSubscription(app.db, ctx.principal, subscriptionId, app.config.webhookMaxSubscriptions);
      } catch (error) {
        if (error instanceof errors.WEBHOOK_SUBSCRIPTION_GRANT_ENDED)
          return reply.redirect(`/ui/webhooks/${subscriptionId}?problem=grant_ended`, 303);
        if (error instanceof errors.WEBHOOK_SUBSCRIPTION_URL_INVALID)
          return reply.redirect(`/ui/webhooks/${subscriptionId}?problem=invalid_url`, 303);
        if (error instanceof errors.WEBHOOK_SUBSCRIPTION_LIMIT) return reply.redirect(`/ui/webhooks/${subscriptionId}?problem=limit`, 303);
        throw error;
      }
      return reply.redirect(`/ui/webhooks/${subscriptionId}?done=enabled`, 303);
    });

    redeliverRoute(app, { base: '/ui/webhooks', what: 'subscription', access });

    app.post<{ Params: { id: string }; Body: FormBody }>('/ui/webhooks/:id/recover', access.route, async (request, reply) => {
      const ctx = signedIn(request);
      const subscriptionId = pathId(request.params.id, 'subscription');
      const back = `/ui/webhooks/${subscriptionId}`;
      const since = parseUtcLocal(text(request.body, 'since'));
      const sinceProblem = since ? recoverSinceProblem(since) : 'invalid';
      if (!since || sinceProblem) return reply.redirect(`${back}?recover=${sinceProblem ?? 'invalid'}#recover-title`, 303);
      try {
        const result = await recoverFailedDeliveries(app.db, ctx.principal, subscriptionId, since);
        return reply.redirect(`${back}?recovered=${result.requeued}${result.more ? '&more=1' : ''}`, 303);
      } catch (error) {
        if (error instanceof errors.WEBHOOK_SUBSCRIPTION_DISABLED) return reply.redirect(`${back}?problem=disabled`, 303);
        throw error;
      }
    });

    deleteRecordRoutes(app, {
      base: '/ui/webhooks',
      what: 'subscription',
      access,
      find: (ctx, id) => getVisibleSubscription(app.db, ctx.principal, id),
      remove: (ctx, id) => removeSubscription(app.db, ctx.principal, id),
      prompt: (subscription) => ({
        title: 'Delete this webhook subscription?',
        message: `${printableUrl(subscription.callback_url)} will receive no more ${subscription.event} events, and its delivery log is deleted. The app that created it can subscribe again.`,
        cancelHref: `/ui/webhooks/${subscription.id}`,
        button: 'Delete subscription',
      }),
    });
  };
}
