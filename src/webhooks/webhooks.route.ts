// REST Hooks for the automation platform (docs/interface.md §4.2–4.3) and webhook
// management for organization users and platforms (§13).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { requirePrincipal } from '../auth/principal.ts';
import { requireUserOrPlatformToken, USER_OR_PLATFORM_SECURITY } from '../oauth/user-or-platform.hook.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import { setNextLink } from '../http/pagination.ts';
import { PLATFORM_SECURITY, requirePlatformToken } from '../oauth/platform-guard.ts';
import { listAttemptsPage, redeliver } from './deliveries.service.ts';
import { recoverFailedDeliveries } from './recovery.service.ts';
import { webhookRateLimit } from './webhook-rate-limit.ts';
import {
  getVisibleSubscription,
  listVisibleSubscriptions,
  reenableSubscription,
  removeSubscription,
  subscribe,
  subscriptionUsage,
  unsubscribe,
  type SubscribeDeps,
} from './subscriptions.service.ts';
import {
  AttemptSchema,
  AttemptsQuery,
  DeliverySchema,
  IdParams,
  ProblemSchema,
  RecoverBody,
  RecoverResponse,
  SubscribeBody,
  SUBSCRIPTION_COUNT_HEADER,
  SUBSCRIPTION_LIMIT_HEADER,
  SubscriptionLimitProblem,
  SubscriptionListSchema,
  SubscriptionSchema,
  SubscriptionSummarySchema,
  UnsubscribeBody,
  UnsubscribeResponse,
} from './webhooks.schemas.ts';

const authErrors = { 401: ProblemSchema, 403: ProblemSchema, 429: ProblemSchema };
const security = USER_OR_PLATFORM_SECURITY;

export default async function webhooksRoutes(fastify: FastifyInstance, options: { webhookSecrets: SecretBox }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const deps: SubscribeDeps = {
    pool: app.db,
    secretBox: options.webhookSecrets,
    urlCheck: { allowPrivate: app.config.webhookAllowPrivateTargets, allowedPorts: app.config.webhookAllowedPorts },
    maxSubscriptions: app.config.webhookMaxSubscriptions,
  };
  const platform = requirePlatformToken('calls:read');
  const userOrPlatform = requireUserOrPlatformToken('calls:read');
  // After authentication: the budget is the grant's (or the user's).
  const limit = webhookRateLimit(app);

  // docs/interface.md §5.1 marks Content-Type optional on the platform's requests: in
  // this scope any body (no Content-Type, text/plain, a form type) is read as
  // JSON. Harmless for CSRF: these routes need an Authorization header, which
  // no cross-site form can send.
  await app.register(async function subscribeRoutes(scope) {
    scope.removeContentTypeParser(['text/plain']);
    scope.addContentTypeParser('*', { parseAs: 'string' }, scope.getDefaultJsonParser('error', 'error'));
    const routes = scope.withTypeProvider<TypeBoxTypeProvider>();

    routes.post(
      '/webhooks/subscribe',
      {
        preHandler: [platform, limit],
        schema: {
          tags: ['webhooks'],
          summary: 'Subscribe a target URL to call.completed (201 new, 200 when it already exists)',
          security: PLATFORM_SECURITY,
          body: SubscribeBody,
          response: {
            200: SubscriptionSummarySchema,
            201: SubscriptionSummarySchema,
            400: ProblemSchema,
            ...authErrors,
            409: SubscriptionLimitProblem,
          },
        },
      },
      async (request, reply) => {
        const { subscription, created } = await subscribe(deps, requirePrincipal(request.principal), request.body);
        return reply.code(created ? 201 : 200).send(subscription);
      },
    );

    routes.delete(
      '/webhooks/subscribe',
      {
        preHandler: [platform, limit],
        schema: {
          tags: ['webhooks'],
          summary: 'Unsubscribe a target URL (idempotent)',
          security: PLATFORM_SECURITY,
          body: UnsubscribeBody,
          response: { 200: UnsubscribeResponse, 400: ProblemSchema, ...authErrors },
        },
      },
      async (request) => {
        await unsubscribe(app.db, requirePrincipal(request.principal), request.body.hookUrl);
        return { success: true };
      },
    );
  });

  app.get(
    '/webhooks',
    {
      preHandler: [userOrPlatform, limit],
      schema: {
        tags: ['webhooks'],
        summary: "The organization's subscriptions with their status (a platform sees its own)",
        security,
        response: { 200: SubscriptionListSchema, ...authErrors },
      },
    },
    async (request, reply) => {
      const principal = requirePrincipal(request.principal);
      const subscriptions = await listVisibleSubscriptions(app.db, principal);
      const usage = await subscriptionUsage(app.db, principal.organizationId, deps.maxSubscriptions);
      reply.header(SUBSCRIPTION_COUNT_HEADER, usage.active).header(SUBSCRIPTION_LIMIT_HEADER, usage.limit);
      return subscriptions;
    },
  );

  app.get(
    '/webhooks/:id',
    {
      preHandler: [userOrPlatform, limit],
      schema: {
        tags: ['webhooks'],
        summary: 'One subscription',
        security,
        params: IdParams,
        response: { 200: SubscriptionSchema, 400: ProblemSchema, ...authErrors, 404: ProblemSchema },
      },
    },
    async (request) => getVisibleSubscription(app.db, requirePrincipal(request.principal), request.params.id),
  );

  app.delete(
    '/webhooks/:id',
    {
      preHandler: [userOrPlatform, limit],
      schema: {
        tags: ['webhooks'],
        summary: 'Delete a subscription (its pending deliveries are dropped)',
        security,
        params: IdParams,
        response: { 204: Type.Null(), 400: ProblemSchema, ...authErrors, 404: ProblemSchema },
      },
    },
    async (request, reply) => {
      await removeSubscription(app.db, requirePrincipal(request.principal), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/webhooks/:id/enable',
    {
      preHandler: [userOrPlatform, limit],
      schema: {
        tags: ['webhooks'],
        summary: 'Re-enable a disabled subscription; its paused deliveries resume',
        security,
        params: IdParams,
        response: {
          200: SubscriptionSchema,
          400: ProblemSchema,
          ...authErrors,
          404: ProblemSchema,
          409: Type.Object(ProblemSchema.properties, {
            description:
              'WEBHOOK_SUBSCRIPTION_GRANT_ENDED: the app must connect again and subscribe; WEBHOOK_SUBSCRIPTION_URL_INVALID: its URL was disabled as invalid (delete it); or WEBHOOK_SUBSCRIPTION_LIMIT: the organization has WEBHOOK_MAX_SUBSCRIPTIONS active subscriptions',
          }),
        },
      },
    },
    async (request) => reenableSubscription(app.db, requirePrincipal(request.principal), request.params.id, deps.maxSubscriptions),
  );

  app.get(
    '/webhooks/:id/deliveries',
    {
      preHandler: [userOrPlatform, limit],
      schema: {
        tags: ['webhooks'],
        summary: 'Delivery attempts of a subscription, newest first (next page in the Link header)',
        security,
        params: IdParams,
        querystring: AttemptsQuery,
        response: { 200: Type.Array(AttemptSchema), 400: ProblemSchema, ...authErrors, 404: ProblemSchema },
      },
    },
    async (request, reply) => {
      const { attempts, nextCursor } = await listAttemptsPage(app.db, requirePrincipal(request.principal), request.params.id, {
        limit: request.query.limit,
        cursor: request.query.cursor,
      });
      setNextLink(request, reply, app.config.baseUrl, nextCursor);
      return attempts;
    },
  );

  app.post(
    '/webhooks/:id/recover',
    {
      preHandler: [userOrPlatform, limit],
      schema: {
        tags: ['webhooks'],
        summary: 'Send again every failed delivery created since a time (at most 1000 per call; idempotent for deliveries already queued)',
        description:
          "Requeues the subscription's deliveries whose status is failed and that were created at or after `since`, oldest first, " +
          'with a fresh retry schedule and the same X-Delivery-Id. Deliveries already pending or in flight are left alone, so calling ' +
          'twice sends nothing twice. `more: true` means further failed deliveries remain: call again. 409 when the subscription is disabled.',
        security,
        params: IdParams,
        body: RecoverBody,
        response: { 202: RecoverResponse, 400: ProblemSchema, ...authErrors, 404: ProblemSchema, 409: ProblemSchema },
      },
    },
    async (request, reply) => {
      const result = await recoverFailedDeliveries(
        app.db,
        requirePrincipal(request.principal),
        request.params.id,
        new Date(request.body.since),
      );
      return reply.code(202).send(result);
    },
  );

  app.post(
    '/webhooks/deliveries/:id/redeliver',
    {
      preHandler: [userOrPlatform, limit],
      schema: {
        tags: ['webhooks'],
        summary: 'Send a delivery again now (same X-Delivery-Id, a fresh retry schedule)',
        security,
        params: IdParams,
        response: { 202: DeliverySchema, 400: ProblemSchema, ...authErrors, 404: ProblemSchema, 409: ProblemSchema },
      },
    },
    async (request, reply) => {
      const delivery = await redeliver(app.db, requirePrincipal(request.principal), request.params.id);
      return reply.code(202).send(delivery);
    },
  );
}
