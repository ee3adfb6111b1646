import fp from 'fastify-plugin';
import { countQueuedDeliveries } from '../webhooks/deliveries.queries.js';
import { createMetrics } from './metrics.js';
async function metricsPlugin(app, options) {
    const metrics = options.metrics ?? createMetrics();
    app.decorate('metrics', metrics);
    metrics.queueDepthSource = () => countQueuedDeliveries(app.db);
    // Route templates (/locations/:id), never raw URLs, keep the label set small.
    app.addHook('onResponse', async (request, reply) => {
        const route = request.routeOptions.url ?? 'unmatched';
        metrics.httpRequests.inc({ method: request.method, route, status: String(reply.statusCode) });
        metrics.httpDuration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
    });
    app.get('/metrics', {
        schema: {
            tags: ['health'],
            summary: 'Prometheus metrics (text exposition format)',
            produces: ['text/plain'],
            response: { 200: { description: 'Prometheus text format 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } } },
        },
    }, async (_request, reply) => {
        const text = await metrics.registry.metrics();
        return reply.type(metrics.registry.contentType).send(text);
    });
}
export default fp(metricsPlugin, { name: 'metrics' });
//# sourceMappingURL=metrics.plugin.js.map