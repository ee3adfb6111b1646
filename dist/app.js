// The application factory: builds a Fastify instance from its dependencies
// without listening, so tests and the server start it the same way.
import Fastify from 'fastify';
import cookie from '@fastify/cookie';
import rateLimit from '@fastify/rate-limit';
import { genReqId, loggerOptions } from './http/logger.js';
import problemDetails, { frameworkErrorProblem } from './http/problem-details.plugin.js';
import rejectNul from './http/reject-nul.plugin.js';
import { acceptEmptyJsonBody } from './http/empty-json-body.js';
import { validatorCompiler } from './http/validation.js';
import healthRoutes from './health/health.route.js';
import sessionsRoutes from './auth/sessions.route.js';
import userTokenRateLimit from './http/user-token-rate-limit.plugin.js';
import locationsRoutes from './locations/locations.route.js';
import serviceAreasRoutes from './service-areas/service-areas.route.js';
import oauthPlugin from './oauth/oauth.plugin.js';
import webPlugin from './web/web.plugin.js';
import openapi from './openapi/openapi.plugin.js';
import callsRoutes from './calls/calls.route.js';
import webhooksRoutes from './webhooks/webhooks.route.js';
import metricsPlugin from './metrics/metrics.plugin.js';
import * as errors from './errors.js';
export const BODY_LIMIT = 64 * 1024;
function carriesCredentials(headers) {
    return headers['x-user-token'] !== undefined || headers.authorization !== undefined || headers['x-client-secret'] !== undefined
        || headers.cookie !== undefined;
}
/**
 * What a standalone `switchboard worker` serves on WORKER_PORT: /healthz,
 * /readyz (the database answers, migrations applied) and /metrics (the
 * delivery counters of this process). Nothing tenant-facing.
 */
export async function buildWorkerApp(options) {
    const { config, pool } = options;
    const app = Fastify({ logger: loggerOptions(config.logLevel, options.logStream), genReqId, frameworkErrors: frameworkErrorProblem });
    app.decorate('db', pool);
    app.decorate('config', config);
    await app.register(problemDetails);
    await app.register(healthRoutes);
    await app.register(metricsPlugin, { metrics: options.metrics });
    return app;
}
export async function buildApp(options) {
    const { config, pool } = options;
    const app = Fastify({
        logger: loggerOptions(config.logLevel, options.logStream),
        genReqId,
        bodyLimit: BODY_LIMIT,
        trustProxy: false,
        ajv: { customOptions: {} },
        frameworkErrors: frameworkErrorProblem,
    });
    app.setValidatorCompiler(validatorCompiler);
    app.decorate('db', pool);
    app.decorate('config', config);
    app.decorateRequest('principal', null);
    app.addHook('onSend', async (request, reply) => {
        reply.header('x-request-id', request.id);
        reply.header('x-content-type-options', 'nosniff');
        // An answer to a request carrying credentials is one organization's data.
        // Shared caches skip requests with Authorization (RFC 9111 §3.5) but not
        // ones with x-user-token, and some (Varnish by default) store a 200 that
        // says nothing: without this, GET /locations could be served to another
        // organization from a proxy in front of us.
        if (!reply.hasHeader('cache-control') && carriesCredentials(request.headers))
            reply.header('cache-control', 'no-store');
    });
    acceptEmptyJsonBody(app);
    // Fastify reads text/plain as a string by default, which every JSON route
    // then refused as "body must be object"; without the parser it is the same
    // 415 problem as any other non-JSON type. (The platform's subscribe routes
    // read any type as JSON; the OAuth routes answer invalid_request.)
    app.removeContentTypeParser('text/plain');
    await app.register(problemDetails);
    await app.register(rejectNul);
    await app.register(rateLimit, {
        global: false,
        // RateLimit-Limit / RateLimit-Remaining / RateLimit-Reset (IETF draft) instead of X-RateLimit-*.
        enableDraftSpec: true,
        // A Redis outage must not take the API down with it: limits fail open, and the error is logged.
        skipOnError: true,
        ...(options.redis ? { redis: options.redis } : {}),
        nameSpace: `${options.rateLimitNamespace ?? 'switchboard'}:rl:`,
        errorResponseBuilder: (_request, context) => {
            const error = new errors.REQUEST_RATE_LIMITED(Math.ceil(context.ttl / 1000));
            return error;
        },
    });
    await app.register(cookie);
    await app.register(openapi);
    await app.register(healthRoutes);
    await app.register(sessionsRoutes);
    await app.register(userTokenRateLimit);
    await app.register(locationsRoutes);
    await app.register(serviceAreasRoutes);
    await app.register(oauthPlugin);
    await app.register(webPlugin);
    await app.register(metricsPlugin, options.metrics ? { metrics: options.metrics } : {});
    await app.register(callsRoutes);
    await app.register(webhooksRoutes);
    return app;
}
//# sourceMappingURL=app.js.map