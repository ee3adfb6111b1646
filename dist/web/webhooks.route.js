import * as errors from '../errors.js';
import { findClient } from '../oauth/clients.service.js';
import { listAttemptsPage, redeliver } from '../webhooks/deliveries.service.js';
import { getVisibleSubscription, listVisibleSubscriptions, reenableSubscription, removeSubscription, } from '../webhooks/subscriptions.service.js';
import { pageCursor } from './calls.route.js';
import { noticeFor, pathId } from './forms.js';
import { sendPage } from './layout.js';
import { confirmDeletePage } from './pages/confirm-delete.page.js';
import { webhookPage } from './pages/webhook.page.js';
import { webhooksPage } from './pages/webhooks.page.js';
import { sectionAccess } from './signed-in.js';
export const ATTEMPTS_PER_PAGE = 25;
const NOTICES = {
    deleted: 'Subscription deleted. Its pending deliveries will not be sent.',
    enabled: 'Subscription re-enabled. Its paused deliveries are being sent.',
    redelivered: 'Delivery queued: it is sent again now, with the same X-Delivery-Id.',
};
const PROBLEMS = {
    in_flight: 'That delivery is being sent right now. Reload in a moment to see the attempt, then redeliver if needed.',
    disabled: 'The subscription is disabled: re-enable it first.',
    grant_ended: "The app's access this subscription was made under has ended: connect the app again; it subscribes anew.",
};
export function webhookPages(csrf) {
    return async function registerWebhookPages(app) {
        const { page, form } = sectionAccess(csrf, 'webhooks');
        const hide = { schema: { hide: true } };
        /** Platform (OAuth client) names for display; the id stands in for a client deleted since. */
        const clientNames = async (ids) => {
            const names = new Map();
            for (const clientId of new Set(ids)) {
                const client = await findClient(app.db, clientId);
                if (client)
                    names.set(clientId, client.name);
            }
            return names;
        };
        app.get('/ui/webhooks', hide, async (request, reply) => {
            const ctx = await page(request, reply);
            if (!ctx)
                return reply;
            const subscriptions = await listVisibleSubscriptions(app.db, ctx.principal);
            const clients = await clientNames(subscriptions.map((s) => s.client_id));
            const message = noticeFor(NOTICES, request.query.done);
            return sendPage(reply, 200, webhooksPage({ nav: ctx.nav, subscriptions, clients, ...(message ? { notice: message } : {}) }));
        });
        app.get('/ui/webhooks/:id', hide, async (request, reply) => {
            const ctx = await page(request, reply);
            if (!ctx)
                return reply;
            const subscriptionId = pathId(request.params.id, 'subscription');
            const cursor = pageCursor(request.query.cursor);
            const subscription = await getVisibleSubscription(app.db, ctx.principal, subscriptionId);
            const { attempts, nextCursor } = await listAttemptsPage(app.db, ctx.principal, subscriptionId, {
                limit: ATTEMPTS_PER_PAGE, ...(cursor ? { cursor } : {}),
            });
            const clientName = (await clientNames([subscription.client_id])).get(subscription.client_id) ?? subscription.client_id;
            const message = noticeFor(NOTICES, request.query.done);
            const problem = noticeFor(PROBLEMS, request.query.problem);
            return sendPage(reply, 200, webhookPage({
                nav: ctx.nav, subscription, clientName, attempts, nextCursor, paged: cursor !== undefined,
                ...(message ? { notice: message } : {}), ...(problem ? { problem } : {}),
            }));
        });
        app.post('/ui/webhooks/:id/enable', hide, async (request, reply) => {
            const ctx = await form(request, reply);
            if (!ctx)
                return reply;
            const subscriptionId = pathId(request.params.id, 'subscription');
            try {
                await reenableSubscription(app.db, ctx.principal, subscriptionId);
            }
            catch (error) {
                if (error instanceof errors.WEBHOOK_SUBSCRIPTION_GRANT_ENDED)
                    return reply.redirect(`/ui/webhooks/${subscriptionId}?problem=grant_ended`, 303);
                throw error;
            }
            return reply.redirect(`/ui/webhooks/${subscriptionId}?done=enabled`, 303);
        });
        app.post('/ui/webhooks/:id/deliveries/:deliveryId/redeliver', hide, async (request, reply) => {
            const ctx = await form(request, reply);
            if (!ctx)
                return reply;
            const subscriptionId = pathId(request.params.id, 'subscription');
            const back = `/ui/webhooks/${subscriptionId}`;
            try {
                await redeliver(app.db, ctx.principal, pathId(request.params.deliveryId, 'delivery'));
            }
            catch (error) {
                // Both are states of the moment, not mistakes: said on the page the user came from.
                if (error instanceof errors.WEBHOOK_DELIVERY_IN_FLIGHT)
                    return reply.redirect(`${back}?problem=in_flight`, 303);
                if (error instanceof errors.WEBHOOK_SUBSCRIPTION_DISABLED)
                    return reply.redirect(`${back}?problem=disabled`, 303);
                throw error;
            }
            return reply.redirect(`${back}?done=redelivered`, 303);
        });
        app.get('/ui/webhooks/:id/delete', hide, async (request, reply) => {
            const ctx = await page(request, reply);
            if (!ctx)
                return reply;
            const subscription = await getVisibleSubscription(app.db, ctx.principal, pathId(request.params.id, 'subscription'));
            return sendPage(reply, 200, confirmDeletePage({
                nav: ctx.nav,
                title: 'Delete this webhook subscription?',
                message: `${subscription.callback_url} will receive no more ${subscription.event} events, and its delivery log is deleted. The app that created it can subscribe again.`,
                action: `/ui/webhooks/${subscription.id}/delete`,
                cancelHref: `/ui/webhooks/${subscription.id}`,
                button: 'Delete subscription',
            }));
        });
        app.post('/ui/webhooks/:id/delete', hide, async (request, reply) => {
            const ctx = await form(request, reply);
            if (!ctx)
                return reply;
            await removeSubscription(app.db, ctx.principal, pathId(request.params.id, 'subscription'));
            return reply.redirect('/ui/webhooks?done=deleted', 303);
        });
    };
}
//# sourceMappingURL=webhooks.route.js.map