// GET|POST /locations, GET|PATCH|DELETE /locations/{id},
// POST /locations/{id}/primary (docs/interface.md §4.5).
// x-user-token; the organization is the session's; RATE_LIMIT per token.
// GET /locations also answers the platform's three headers with locations:read.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { requirePrincipal } from '../auth/principal.ts';
import { presentedUserTokenHash, requireUserToken } from '../auth/user-token.hook.ts';
import { USER_OR_PLATFORM_SECURITY } from '../oauth/user-or-platform.hook.ts';
import { sendJsonText } from '../http/json-text.ts';
import { requirePlatformToken } from '../oauth/platform-guard.ts';
import { IdParams, ProblemSchema } from '../http/schemas.ts';
import { Location, LocationCreateBody, LocationList, LocationPatchBody } from './locations.schemas.ts';
import {
  createLocation,
  deleteLocation,
  getLocation,
  listLocations,
  locationsForSession,
  makePrimary,
  updateLocation,
} from './locations.service.ts';

export default async function locationsRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const guarded = { onRequest: app.userTokenRateLimit, preHandler: requireUserToken };
  const common = { tags: ['locations'], security: [{ userToken: [] }] };
  const failures = { 400: ProblemSchema, 401: ProblemSchema, 404: ProblemSchema, 429: ProblemSchema };

  // The hot read: the session check and the read are one statement
  // (locationsForSession), so the list costs one round trip. An OAuth client
  // (the three platform headers with locations:read) reads the same list for
  // its dropdowns; writes keep needing a user.
  const platformRead = requirePlatformToken('locations:read');
  app.get(
    '/locations',
    {
      onRequest: app.userTokenRateLimit,
      schema: {
        ...common,
        security: USER_OR_PLATFORM_SECURITY,
        summary: "List the organization's locations, primary first, then by name",
        response: { 200: LocationList, 401: ProblemSchema, 403: ProblemSchema, 429: ProblemSchema },
      },
    },
    async (request, reply) => {
      if (request.headers['x-user-token'] === undefined && request.headers.authorization !== undefined) {
        await platformRead.call(app, request, reply);
        return listLocations(app.db, requirePrincipal(request.principal).organizationId);
      }
      const found = await locationsForSession(app.db, app.caches, presentedUserTokenHash(request));
      request.principal = { kind: 'user', userId: found.userId, organizationId: found.organizationId, scopes: 'all' };
      return sendJsonText(reply, found.body);
    },
  );

  app.post(
    '/locations',
    {
      ...guarded,
      schema: {
        ...common,
        summary: 'Create a location',
        body: LocationCreateBody,
        response: { 201: Location, 400: ProblemSchema, 401: ProblemSchema, 409: ProblemSchema, 429: ProblemSchema },
      },
    },
    async (request, reply) => {
      const location = await createLocation(app.db, app.caches, requirePrincipal(request.principal).organizationId, request.body);
      return reply.code(201).header('location', `/locations/${location.id}`).send(location);
    },
  );

  app.get(
    '/locations/:id',
    {
      ...guarded,
      schema: { ...common, summary: 'Get one location', params: IdParams, response: { 200: Location, ...failures } },
    },
    async (request) => getLocation(app.db, requirePrincipal(request.principal).organizationId, request.params.id),
  );

  app.patch(
    '/locations/:id',
    {
      ...guarded,
      schema: {
        ...common,
        summary: 'Update a location (partial; null clears a nullable field)',
        params: IdParams,
        body: LocationPatchBody,
        response: { 200: Location, ...failures, 409: ProblemSchema },
      },
    },
    async (request) =>
      updateLocation(app.db, app.caches, requirePrincipal(request.principal).organizationId, request.params.id, request.body),
  );

  app.delete(
    '/locations/:id',
    {
      ...guarded,
      schema: {
        ...common,
        summary: 'Delete a location; linked service areas stay, unlinked',
        params: IdParams,
        response: { 204: Type.Null(), ...failures },
      },
    },
    async (request, reply) => {
      await deleteLocation(app.db, app.caches, requirePrincipal(request.principal).organizationId, request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/locations/:id/primary',
    {
      ...guarded,
      schema: {
        ...common,
        summary: 'Make this the primary location (the previous primary is cleared in the same transaction)',
        params: IdParams,
        response: { 200: Location, ...failures, 409: ProblemSchema },
      },
    },
    async (request) => makePrimary(app.db, app.caches, requirePrincipal(request.principal).organizationId, request.params.id),
  );
}
