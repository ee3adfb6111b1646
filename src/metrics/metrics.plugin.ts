// GET /metrics: Prometheus text exposition of this instance's registry.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { createMetrics, type Metrics } from './metrics.ts';

/** Where the gauges read from at scrape time: the capabilities that own the rows (app.ts hands them in). */
export type GaugeSources = Required<Pick<Metrics, 'queueDepthSource' | 'circuitStateSource' | 'alertsWaitingSource'>>;

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics;
  }
}

async function metricsPlugin(app: FastifyInstance, options: { metrics?: Metrics; sources: GaugeSources }) {
  const metrics = options.metrics ?? createMetrics();
  app.decorate('metrics', metrics);
  Object.assign(metrics, options.sources);

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
