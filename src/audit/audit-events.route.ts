// GET /audit-events (docs/interface.md, "Audit log"): x-user-token, the
// organization's owners and admins; newest first, paged like GET /calls.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { requirePrincipal } from '../auth/principal.ts';
import { requireUserToken } from '../auth/user-token.hook.ts';
import { setNextLink } from '../http/pagination.ts';
import { AuditEventSchema, ListAuditEventsQuery, ProblemSchema } from './audit-events.schemas.ts';
import { listAuditEventsPage, parseSince, parseTypes } from './audit-events.service.ts';

export default async function auditEventsRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/audit-events',
    {
      onRequest: app.userTokenRateLimit,
      preHandler: requireUserToken,
      schema: {
        tags: ['audit'],
        summary: "The organization's audit log, newest first (owners and admins; next page in the Link header)",
        security: [{ userToken: [] }],
        querystring: ListAuditEventsQuery,
        response: {
          200: Type.Array(AuditEventSchema),
          400: ProblemSchema,
          401: ProblemSchema,
          403: ProblemSchema,
          429: ProblemSchema,
        },
      },
    },
    async (request, reply) => {
      const { limit, cursor, type, since } = request.query;
      const { events, nextCursor } = await listAuditEventsPage(app.db, requirePrincipal(request.principal), {
        limit,
        cursor,
        types: parseTypes(type),
        since: parseSince(since),
      });
      setNextLink(request, reply, app.config.baseUrl, nextCursor);
      return events;
    },
  );
}
