// POST /oauth/register (RFC 7591 §3): dynamic registration of public clients.
// Off with OAUTH_DYNAMIC_REGISTRATION=false (the route is then absent: 404).
import type { FastifyInstance } from 'fastify';
import { RegistrationErrorSchema, RegistrationRequestSchema, RegistrationResponseSchema } from '../oauth.schemas.ts';
import { registerPublicClient } from './registration.service.ts';

/** Registrations per address per hour: a person's assistant registers once or twice, a flood is refused. */
export const REGISTRATIONS_PER_HOUR = 20;

export default async function registerRoutes(app: FastifyInstance) {
  app.post(
    '/oauth/register',
    {
      config: { rateLimit: { max: REGISTRATIONS_PER_HOUR, timeWindow: 3_600_000 } },
      // Validated by client-metadata.ts, which answers in RFC 7591 §3.2.2 form; the schema documents.
      validatorCompiler: () => () => true,
      schema: {
        tags: ['oauth'],
        summary: 'Dynamic client registration (RFC 7591) for public clients such as MCP assistants',
        consumes: ['application/json'],
        body: RegistrationRequestSchema,
        response: { 201: RegistrationResponseSchema, 400: RegistrationErrorSchema, 429: RegistrationErrorSchema },
      },
    },
    async (request, reply) => {
      const client = await registerPublicClient(app.db, request.body);
      return reply.code(201).header('cache-control', 'no-store').header('pragma', 'no-cache').send(client);
    },
  );
}
