// GET /agents (the organization's agents, for a platform's dropdown), and
// POST /agents, PATCH /agents/{id} for owners and admins (docs/interface.md §12).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { requirePrincipal } from '../auth/principal.ts';
import { requireUserOrPlatformToken, USER_OR_PLATFORM_SECURITY } from '../oauth/user-or-platform.hook.ts';
import { requireUserToken } from '../auth/user-token.hook.ts';
import { IdParams, NAME_MAX_LENGTH, ProblemSchema, Uuid } from '../http/schemas.ts';
import type { Agent } from './agents.queries.ts';
import { createAgent, listAgents, requireAgentWriter, updateAgent } from './agents.service.ts';

const AgentSchema = Type.Object({ id: Uuid, name: Type.String() }, { description: 'an agent: a person or bot who handles calls' });
const AgentBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: NAME_MAX_LENGTH, description: `1 to ${NAME_MAX_LENGTH} characters` }) },
  { additionalProperties: false },
);
const failures = { 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema };

const agentView = (agent: Agent) => ({ id: agent.id, name: agent.name });

export default async function agentsRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const writer = {
    preHandler: async (request: Parameters<typeof requireUserToken>[0]) => {
      await requireUserToken(request);
      requireAgentWriter(requirePrincipal(request.principal));
    },
  };

  app.get(
    '/agents',
    {
      preHandler: requireUserOrPlatformToken('calls:read'),
      schema: {
        tags: ['calls'],
        summary: "The organization's agents, by name",
        security: USER_OR_PLATFORM_SECURITY,
        response: { 200: Type.Array(AgentSchema), ...failures },
      },
    },
    async (request) => (await listAgents(app.db, requirePrincipal(request.principal).organizationId)).map(agentView),
  );

  app.post(
    '/agents',
    {
      ...writer,
      schema: {
        tags: ['calls'],
        summary: 'Create an agent (owners and admins)',
        security: [{ userToken: [] }],
        body: AgentBody,
        response: { 201: AgentSchema, ...failures },
      },
    },
    async (request, reply) => {
      const agent = await createAgent(app.db, requirePrincipal(request.principal).organizationId, request.body.name);
      return reply.code(201).send(agentView(agent));
    },
  );

  app.patch(
    '/agents/:id',
    {
      ...writer,
      schema: {
        tags: ['calls'],
        summary: 'Rename an agent (owners and admins); calls keep the name they completed with',
        security: [{ userToken: [] }],
        params: IdParams,
        body: AgentBody,
        response: { 200: AgentSchema, ...failures, 404: ProblemSchema },
      },
    },
    async (request) =>
      agentView(await updateAgent(app.db, requirePrincipal(request.principal).organizationId, request.params.id, request.body.name)),
  );
}
