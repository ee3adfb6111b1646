// GET|POST /service-areas, GET|PATCH|DELETE /service-areas/{id}
// (docs/interface.md §4.5). x-user-token; RATE_LIMIT per token.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { requirePrincipal } from '../auth/principal.ts';
import { requireUserToken } from '../auth/user-token.hook.ts';
import { IdParams, ProblemSchema } from '../http/schemas.ts';
import { ServiceArea, ServiceAreaCreateBody, ServiceAreaList, ServiceAreaPatchBody } from './service-areas.schemas.ts';
import { createServiceArea, deleteServiceArea, getServiceArea, listServiceAreas, updateServiceArea } from './service-areas.service.ts';

export default async function serviceAreasRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const guarded = { onRequest: app.userTokenRateLimit, preHandler: requireUserToken };
  const common = { tags: ['service-areas'], security: [{ userToken: [] }] };
  const failures = { 400: ProblemSchema, 401: ProblemSchema, 404: ProblemSchema, 429: ProblemSchema };

  app.get(
    '/service-areas',
    {
      ...guarded,
      schema: {
        ...common,
        summary: "List the organization's service areas by label",
        response: { 200: ServiceAreaList, 401: ProblemSchema, 429: ProblemSchema },
      },
    },
    async (request) => listServiceAreas(app.db, requirePrincipal(request.principal).organizationId),
  );

  app.post(
    '/service-areas',
    {
      ...guarded,
      schema: {
        ...common,
        summary: 'Create a service area',
        body: ServiceAreaCreateBody,
        response: { 201: ServiceArea, 400: ProblemSchema, 401: ProblemSchema, 429: ProblemSchema },
      },
    },
    async (request, reply) => {
      const area = await createServiceArea(app.db, requirePrincipal(request.principal).organizationId, request.body);
      return reply.code(201).header('location', `/service-areas/${area.id}`).send(area);
    },
  );

  app.get(
    '/service-areas/:id',
    {
      ...guarded,
      schema: { ...common, summary: 'Get one service area', params: IdParams, response: { 200: ServiceArea, ...failures } },
    },
    async (request) => getServiceArea(app.db, requirePrincipal(request.principal).organizationId, request.params.id),
  );

  app.patch(
    '/service-areas/:id',
    {
      ...guarded,
      schema: {
        ...common,
        summary: 'Update a service area (partial; null clears a nullable field, location_id null unlinks)',
        params: IdParams,
        body: ServiceAreaPatchBody,
        response: { 200: ServiceArea, ...failures },
      },
    },
    async (request) => updateServiceArea(app.db, requirePrincipal(request.principal).organizationId, request.params.id, request.body),
  );

  app.delete(
    '/service-areas/:id',
    {
      ...guarded,
      schema: { ...common, summary: 'Delete a service area', params: IdParams, response: { 204: Type.Null(), ...failures } },
    },
    async (request, reply) => {
      await deleteServiceArea(app.db, requirePrincipal(request.principal).organizationId, request.params.id);
      return reply.code(204).send(null);
    },
  );
}
