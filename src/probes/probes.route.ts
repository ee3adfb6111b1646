// /healthz: the process answers (and has not given up). /readyz: the database answers and every
// migration this build knows about has been applied.
import type { FastifyInstance } from 'fastify';
import { listMigrations, pendingMigrations } from '../db/migrate.ts';
import * as errors from '../errors.ts';
import { isDatabaseOutage } from '../http/error-status.ts';
import { sendProblem } from '../http/problem-details.plugin.ts';
import { ProblemSchema } from '../http/schemas.ts';
import { Type } from '@sinclair/typebox';

export default async function healthRoutes(app: FastifyInstance) {
  const known = await listMigrations();

  // Probes arrive every few seconds from every load balancer and orchestrator:
  // their request logs would drown the real ones, so only warnings are logged.
  app.get(
    '/healthz',
    {
      logLevel: 'warn',
      schema: {
        tags: ['health'],
        summary: 'Liveness: the process answers (503 once it has given up and is exiting)',
        response: { 200: Type.Object({ status: Type.Literal('ok') }), 503: ProblemSchema },
      },
    },
    async (_request, reply) => {
      const { failure } = app.liveness;
      if (failure !== undefined) return sendProblem(reply, 503, new errors.SERVICE_UNAVAILABLE(0).code, failure);
      return { status: 'ok' as const };
    },
  );

  app.get(
    '/readyz',
    {
      logLevel: 'warn',
      schema: {
        tags: ['health'],
        summary: 'Readiness: the database answers and every migration is applied',
        response: { 200: Type.Object({ status: Type.Literal('ready') }), 503: ProblemSchema },
      },
    },
    async (request, reply) => {
      try {
        const pending = await pendingMigrations(app.db, known);
        if (pending.length > 0) {
          return sendProblem(reply, 503, new errors.NOT_READY().code, `migrations not applied: ${pending.join(', ')}`);
        }
        return { status: 'ready' };
      } catch (error) {
        // An outage is logged once (with Retry-After set), not on every probe.
        if (!isDatabaseOutage(request, reply, error)) request.log.warn({ err: error }, 'readiness check failed');
        return sendProblem(reply, 503, new errors.NOT_READY().code, 'database unreachable');
      }
    },
  );
}
