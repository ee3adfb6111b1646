// POST /auth/sessions, GET /auth/session, PUT /auth/session/organization,
// DELETE /auth/session (docs/interface.md §11).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { requirePrincipal } from './principal.ts';
import { LoginBody, LoginResponse, ProblemSchema, SessionView, SwitchOrganizationBody } from './sessions.schemas.ts';
import { describeSession, login, logout, switchOrganization } from './sessions.service.ts';
import { requireUserToken } from './user-token.hook.ts';

export default async function sessionsRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/auth/sessions',
    {
      schema: {
        tags: ['auth'],
        summary: 'Log in and receive an x-user-token',
        body: LoginBody,
        response: { 201: LoginResponse, 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema, 429: ProblemSchema },
      },
    },
    async (request, reply) => {
      // Failed attempts are throttled per email and per address (src/auth/login-throttle.ts).
      const session = await login(app.db, request.body, request.ip);
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send({ ...session, expires_at: session.expires_at.toISOString() });
    },
  );

  app.get(
    '/auth/session',
    {
      preHandler: requireUserToken,
      schema: { tags: ['auth'], summary: 'Describe the current session', response: { 200: SessionView, 401: ProblemSchema } },
    },
    async (request) => {
      const view = await describeSession(app.db, requirePrincipal(request.principal).session!);
      return { ...view, expires_at: view.expires_at.toISOString() };
    },
  );

  app.put(
    '/auth/session/organization',
    {
      preHandler: requireUserToken,
      schema: {
        tags: ['auth'],
        summary: 'Switch the organization the session acts in',
        body: SwitchOrganizationBody,
        response: { 200: SessionView, 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema },
      },
    },
    async (request) => {
      const view = await switchOrganization(app.db, app.caches, requirePrincipal(request.principal).session!, request.body.organization_id);
      return { ...view, expires_at: view.expires_at.toISOString() };
    },
  );

  app.delete(
    '/auth/session',
    {
      preHandler: requireUserToken,
      schema: { tags: ['auth'], summary: 'Log out (end the session)', response: { 204: Type.Null(), 401: ProblemSchema } },
    },
    async (request, reply) => {
      await logout(app.db, app.caches, requirePrincipal(request.principal).session!);
      return reply.code(204).send(null);
    },
  );
}
