// Calls ingest and reading (docs/interface.md §12), and the platform's sample
// endpoint GET /calls/recent (docs/interface.md §4.4).
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { requirePrincipal, type Principal } from '../auth/principal.ts';
import { requireUserOrPlatformToken, USER_OR_PLATFORM_SECURITY } from '../oauth/user-or-platform.hook.ts';
import { sendJsonText } from '../http/json-text.ts';
import { setNextLink } from '../http/pagination.ts';
import { PLATFORM_SECURITY, platformCredentials, platformPrincipal, refusePlatform } from '../oauth/platform-guard.ts';
import {
  CallCompletedEventSchema,
  CallSchema,
  CompleteCallBody,
  CreateCallBody,
  CallWriteHeaders,
  IdParams,
  KeyInProgressProblem,
  KeyReusedProblem,
  ListCallsQuery,
  ProblemSchema,
  RecentCallsQuery,
} from './calls.schemas.ts';
import { completeCall, recordCall } from './calls.service.ts';
import { getCall, listCallsPage, listQueryFilters } from './call-reads.service.ts';
import { recentCallsForPlatform } from './recent-calls.service.ts';
import { keyCaller, keyFromHeader, type Answer, type CallerKey } from './idempotency.ts';
import { completionTraceContext, requestTraceContext } from '../tracing/request-context.ts';

/** A transcript of 50,000 characters fits (docs/interface.md §8); other routes keep BODY_LIMIT. */
export const CALLS_BODY_LIMIT = 256 * 1024;

const errorsFor = { 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema };
const security = USER_OR_PLATFORM_SECURITY;

/** A stored answer given again says so (as Stripe's API does). */
function markReplayed(reply: FastifyReply, answer: Answer<unknown>) {
  if (answer.replayed) reply.header('idempotent-replayed', 'true');
}

/** An Idempotency-Key header's key, as its caller's key. */
function callerKey(header: string | undefined, principal: Principal): CallerKey | undefined {
  const key = keyFromHeader(header);
  return key === undefined ? undefined : { caller: keyCaller(principal), key };
}

export default async function callsRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const canWrite = requireUserOrPlatformToken('calls:write');
  const canRead = requireUserOrPlatformToken('calls:read');

  // The platform's polling endpoint is the hottest read: the token's principal
  // and the calls are read together (from the process caches, or in one
  // statement, recent-calls.service.ts recentCallsForPlatform) and PostgreSQL writes
  // the JSON, so a request costs one round trip at most.
  app.get(
    '/calls/recent',
    {
      schema: {
        tags: ['calls'],
        summary: 'Recent completed calls (sample data for the call.completed trigger), newest first',
        security: PLATFORM_SECURITY,
        querystring: RecentCallsQuery,
        response: { 200: Type.Array(CallCompletedEventSchema), ...errorsFor },
      },
    },
    async (request, reply) => {
      const scope = 'calls:read';
      const { limit, direction, location_id, agent_id, min_duration_seconds } = request.query;
      const filters = { direction, location_id, agent_id, min_duration_seconds };
      const result = await recentCallsForPlatform(app.db, app.caches, platformCredentials(request, reply), scope, {
        limit,
        filters,
        baseUrl: app.config.baseUrl,
      });
      if (result.outcome !== 'ok') return refusePlatform(reply, result.outcome, scope);
      request.principal = platformPrincipal(result.active);
      return sendJsonText(reply, result.body);
    },
  );

  app.post(
    '/calls',
    {
      preHandler: canWrite,
      bodyLimit: CALLS_BODY_LIMIT,
      // Every field is optional (docs/interface.md §12: POST /calls {agent_id?}), so no body at all means an empty one.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        tags: ['calls'],
        summary: 'Record a call (in progress, or completed when summary and duration_seconds are given)',
        security,
        headers: CallWriteHeaders,
        body: CreateCallBody,
        response: { 201: CallSchema, ...errorsFor, 409: KeyInProgressProblem, 422: KeyReusedProblem },
      },
    },
    async (request, reply) => {
      const principal = requirePrincipal(request.principal);
      const answer = await recordCall(
        app.db,
        app.caches,
        principal.organizationId,
        request.body,
        callerKey(request.headers['idempotency-key'], principal),
        requestTraceContext(request.headers),
      );
      markReplayed(reply, answer);
      return reply.code(answer.status).header('location', `/calls/${answer.body.id}`).send(answer.body);
    },
  );

  app.post(
    '/calls/:id/complete',
    {
      preHandler: canWrite,
      bodyLimit: CALLS_BODY_LIMIT,
      schema: {
        tags: ['calls'],
        summary: 'Complete a call; fires call.completed',
        security,
        headers: CallWriteHeaders,
        params: IdParams,
        body: CompleteCallBody,
        response: {
          200: CallSchema,
          ...errorsFor,
          404: ProblemSchema,
          409: Type.Object(ProblemSchema.properties, {
            description:
              'CALL_ALREADY_COMPLETED, or IDEMPOTENCY_KEY_IN_PROGRESS: a request with the same Idempotency-Key is still being processed (Retry-After)',
          }),
          422: KeyReusedProblem,
        },
      },
    },
    async (request, reply) => {
      const principal = requirePrincipal(request.principal);
      const answer = await completeCall(
        app.db,
        app.caches,
        principal.organizationId,
        request.params.id,
        request.body,
        callerKey(request.headers['idempotency-key'], principal),
        completionTraceContext(request.headers),
      );
      markReplayed(reply, answer);
      return reply.code(answer.status).send(answer.body);
    },
  );

  app.get(
    '/calls',
    {
      preHandler: canRead,
      schema: {
        tags: ['calls'],
        summary: 'List calls, newest first (next page in the Link header)',
        security,
        querystring: ListCallsQuery,
        response: { 200: Type.Array(CallSchema), ...errorsFor },
      },
    },
    async (request, reply) => {
      // Named fields only: what reaches the query is what the schema declared and checked.
      const { calls, nextCursor } = await listCallsPage(
        app.db,
        requirePrincipal(request.principal).organizationId,
        listQueryFilters(request.query),
      );
      setNextLink(request, reply, app.config.baseUrl, nextCursor);
      return calls;
    },
  );

  app.get(
    '/calls/:id',
    {
      preHandler: canRead,
      schema: {
        tags: ['calls'],
        summary: 'One call',
        security,
        params: IdParams,
        response: { 200: CallSchema, ...errorsFor, 404: ProblemSchema },
      },
    },
    async (request) => {
      return getCall(app.db, requirePrincipal(request.principal).organizationId, request.params.id);
    },
  );
}
