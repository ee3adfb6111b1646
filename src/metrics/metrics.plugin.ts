// GET /metrics: Prometheus text exposition of this instance's registry.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { countWaitingEmails } from '../alerts/outbox.queries.ts';
import { countQueuedDeliveries } from '../webhooks/queued-deliveries.queries.ts';
import { countCircuitStates } from '../webhooks/subscriptions.queries.ts';
import { createMetrics, type Metrics } from './metrics.ts';

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics;
  }
}

async function metricsPlugin(app: FastifyInstance, options: { metrics?: Metrics }) {
  const metrics = options.metrics ?? createMetrics();
  app.decorate('metrics', metrics);
  metrics.queueDepthSource = () => countQueuedDeliveries(app.ownerDb);
  metrics.circuitStateSource = () => countCircuitStates(app.ownerDb);
  metrics.alertsWaitingSource = () => countWaitingEmails(app.ownerDb);

  // Route templates (/locations/:id), never raw URLs, keep the label set small.
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.httpRequests.inc({ method: request.method, route, status: String(reply.statusCode) });
    metrics.httpDuration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
    done();
  });
  app.get(
    '/metrics',
    {
      schema: {
        tags: ['health'],
        summary: 'Prometheus metrics (text exposition format)',
        produces: ['text/plain'],
        response: { 200: { description: 'Prometheus text format 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } } },
      },
    },
    async (_request, reply) => {
      const text = await metrics.registry.metrics();
      return reply.type(metrics.registry.contentType).send(text);
    },
  );
}

export default fp(metricsPlugin, { name: 'metrics' });
