// Redeliver as a form post, from a subscription's page or a call's page: the
// delivery is queued again and the page the user came from says so, or says
// why it was not (its state, not a mistake). One route shape and one set of
// texts for both pages.
import type { FastifyInstance } from 'fastify';
import * as errors from '../errors.ts';
import { redeliver } from '../webhooks/deliveries.service.ts';
import { type FormBody, pathId } from './forms.ts';
import { signedIn, type SectionAccess } from './signed-in.ts';

/** `?done=redelivered` on the page the user came from. */
export const REDELIVERED_NOTICE = { redelivered: 'Delivery queued: it is sent again now, with the same X-Delivery-Id.' };

/** `?problem=…` on the page the user came from: why the delivery was not queued. */
export const REDELIVER_PROBLEMS = {
  in_flight: 'That delivery is being sent right now. Reload in a moment to see the attempt, then redeliver if needed.',
  disabled: 'The subscription is disabled: re-enable it first.',
  access_ended: "That delivery was dropped when the app's access ended: it is never sent, even after the app connects again.",
};

/**
 * POST `<base>/:id/deliveries/:deliveryId/redeliver`, back to `<base>/:id`
 * (`what` names the page's record in a 404 for an id that is not one).
 */
export function redeliverRoute(app: FastifyInstance, input: { base: string; what: string; access: SectionAccess }): void {
  app.post<{ Params: { id: string; deliveryId: string }; Body: FormBody }>(
    `${input.base}/:id/deliveries/:deliveryId/redeliver`,
    input.access.route,
    async (request, reply) => {
      const ctx = signedIn(request);
      const back = `${input.base}/${pathId(request.params.id, input.what)}`;
      try {
        await redeliver(app.db, ctx.principal, pathId(request.params.deliveryId, 'delivery'));
      } catch (error) {
        if (error instanceof errors.WEBHOOK_DELIVERY_ACCESS_ENDED) return reply.redirect(`${back}?problem=access_ended`, 303);
        if (error instanceof errors.WEBHOOK_DELIVERY_IN_FLIGHT) return reply.redirect(`${back}?problem=in_flight`, 303);
        if (error instanceof errors.WEBHOOK_SUBSCRIPTION_DISABLED) return reply.redirect(`${back}?problem=disabled`, 303);
        throw error;
      }
      return reply.redirect(`${back}?done=redelivered`, 303);
    },
  );
}
