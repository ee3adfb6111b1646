// The application factory: builds a Fastify instance from its dependencies
// without listening, so tests and the server start it the same way.
import { setBaseUrlSetting } from './db/with-org.ts';
import Fastify, { type FastifyInstance } from 'fastify';
import cookie from '@fastify/cookie';
import rateLimit from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import type { Config } from './config/config.ts';
import { resolveKeyRing } from './config/secret-key.ts';
import { createCsrf, CSRF_COOKIE, type Csrf } from './crypto/csrf.ts';
import { createSecretBox, type SecretBox } from './crypto/secret-box.ts';
import type { KeyRing } from './crypto/key-ring.ts';
import type { Pool } from './db/pool.ts';
import { censorChildBindings, genReqId, loggerOptions } from './http/logger.ts';
import { activeTracing } from './tracing/tracing.ts';
import { CompletedRequestLog } from './http/request-log.ts';
import problemDetails, { frameworkErrorProblem } from './http/problem-details.plugin.ts';
import rejectNul from './http/reject-nul.plugin.ts';
import rejectUndeclaredQuery from './http/reject-undeclared-query.plugin.ts';
import { acceptEmptyJsonBody } from './http/empty-json-body.ts';
import { validatorCompiler } from './http/validation.ts';
import healthRoutes from './probes/probes.route.ts';
import { livenessServerFactory, type Liveness } from './probes/liveness-server.ts';
import sessionsRoutes from './auth/sessions.route.ts';
import userTokenRateLimit from './auth/user-token-rate-limit.plugin.ts';
import locationsRoutes from './locations/locations.route.ts';
import serviceAreasRoutes from './service-areas/service-areas.route.ts';
import oauthPlugin from './oauth/oauth.plugin.ts';
import webPlugin from './web/web.plugin.ts';
import openapi from './openapi/openapi.plugin.ts';
import callsRoutes from './calls/calls.route.ts';
import agentsRoutes from './calls/agents.route.ts';
import webhooksRoutes from './webhooks/webhooks.route.ts';
import auditEventsRoutes from './audit/audit-events.route.ts';
import metricsPlugin, { type GaugeSources } from './metrics/metrics.plugin.ts';
import { countWaitingEmails } from './alerts/outbox.queries.ts';
import { countQueuedDeliveries } from './webhooks/queued-deliveries.queries.ts';
import { countCircuitStates } from './webhooks/subscriptions.queries.ts';
import mcpPlugin from './mcp/mcp.plugin.ts';
import type { Metrics } from './metrics/metrics.ts';
import * as errors from './errors.ts';
import { NO_CACHES, type Caches } from './cache/caches.ts';
import { cookieName, isSecureDeployment } from './web/session.ts';

export const BODY_LIMIT = 64 * 1024;

function carriesCredentials(headers: Record<string, unknown>): boolean {
  return (
    headers['x-user-token'] !== undefined ||
    headers.authorization !== undefined ||
    headers['x-client-secret'] !== undefined ||
    headers.cookie !== undefined
  );
}

/** What SECRET_KEY (and SECRET_KEY_PREVIOUS) keys, made once per process: each purpose its own box or HMAC key, so none opens another's. */
export interface Keyed {
  /** The keys themselves, for the start-up check of which key each sealed value is under (src/key-rotation). */
  keys: KeyRing;
  /** Webhook secrets, sent back verbatim when signing deliveries. */
  webhookSecrets: SecretBox;
  /** A rotated refresh token's successor, kept for a replay within REFRESH_REUSE_GRACE. */
  refreshSuccessors: SecretBox;
  /** The token of every form: the web UI's and the consent page's. */
  csrf: Csrf;
}

export async function buildKeyed(config: Config): Promise<Keyed> {
  const keys = await resolveKeyRing(config);
  return {
    keys,
    webhookSecrets: createSecretBox(keys, 'webhook-secret'),
    refreshSuccessors: createSecretBox(keys, 'refresh-token'),
    csrf: createCsrf(keys, { name: cookieName(config, CSRF_COOKIE), secure: isSecureDeployment(config) }),
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The request pool: switchboard_request in production (src/db/request-pool.ts). */
    db: Pool;
    /** The owner connection, for the few system reads a request-serving process makes (the queue depth on /metrics). */
    ownerDb: Pool;
    config: Config;
    /** Credential and read caches (src/cache); NO_CACHES when the process keeps none. */
    caches: Caches;
    /** What /healthz answers (src/probes/liveness-server.ts). */
    liveness: Liveness;
  }
}

export interface AppOptions {
  config: Config;
  /** Request work: a pool connected as switchboard_request (a benchmark may pass the owner pool). */
  pool: Pool;
  /** The owner connection; `pool` when absent. */
  ownerPool?: Pool;
  /** Shared rate-limit store; in-process memory when absent. */
  redis?: Redis;
  /** Where JSON log lines go (stdout by default). */
  logStream?: NodeJS.WritableStream;
  /** Prefix for rate-limit keys in Redis, so separate deployments (or tests) do not share budgets. */
  rateLimitNamespace?: string;
  /** Shared with the in-process delivery worker; a fresh registry when absent. */
  metrics?: Metrics;
  /** Process caches kept true by a LISTEN connection (server.ts); none when absent. */
  caches?: Caches;
  /** Shared with the in-process delivery worker (server.ts); built from the config when absent. */
  keyed?: Keyed;
  /** Set to failing by server.ts when the process gives up (/healthz); always live when absent. */
  liveness?: Liveness;
}

/**
 * What a standalone `switchboard worker` serves on WORKER_PORT: /healthz,
 * /readyz (the database answers, migrations applied) and /metrics (the
 * delivery counters of this process). Nothing tenant-facing.
 */
export async function buildWorkerApp(
  options: Pick<AppOptions, 'config' | 'pool' | 'logStream' | 'liveness'> & { metrics: Metrics },
): Promise<FastifyInstance> {
  const { config, pool } = options;
  const liveness = options.liveness ?? {};
  const app = Fastify({
    logger: loggerOptions(config.logLevel, options.logStream),
    genReqId,
    frameworkErrors: frameworkErrorProblem,
    serverFactory: livenessServerFactory(liveness),
  });
  censorChildBindings(app.log);
  app.decorate('db', pool);
  app.decorate('ownerDb', pool);
  app.decorate('config', config);
  app.decorate('caches', NO_CACHES);
  app.decorate('liveness', liveness);
  await app.register(problemDetails);
  await app.register(healthRoutes);
  await app.register(metricsPlugin, { metrics: options.metrics, sources: gaugeSources(pool) });
  return app;
}

// Fastify gives a plugin 10 s to finish loading, a guard against a callback plugin that never calls done (ours are
// all async). On a starved machine the OpenAPI plugin, which reads swagger-ui's assets, took longer, and a server that
// merely started slowly failed to start: allow a minute.
const PLUGIN_TIMEOUT_MS = 60_000;

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config, pool } = options;
  setBaseUrlSetting(config.baseUrl);
  const keyed = options.keyed ?? (await buildKeyed(config));
  const liveness = options.liveness ?? {};
  const app = Fastify({
    logger: loggerOptions(config.logLevel, options.logStream),
    genReqId,
    bodyLimit: BODY_LIMIT,
    trustProxy: false,
    ajv: { customOptions: {} },
    frameworkErrors: frameworkErrorProblem,
    serverFactory: livenessServerFactory(liveness),
    pluginTimeout: PLUGIN_TIMEOUT_MS,
    logController: new CompletedRequestLog(),
  });
  censorChildBindings(app.log);
  app.setValidatorCompiler(validatorCompiler);
  app.decorate('db', pool);
  app.decorate('ownerDb', options.ownerPool ?? pool);
  app.decorate('config', config);
  app.decorate('caches', options.caches ?? NO_CACHES);
  app.decorate('liveness', liveness);
  app.decorateRequest('principal', null);
  // While traces are exported: a server span per request (src/tracing).
  activeTracing()?.serverSpans(app);

  // Callback style, not async: it runs on every answer, and a promise per hook is measurable there.
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    // An answer to a request carrying credentials is one organization's data.
    // Shared caches skip requests with Authorization (RFC 9111 §3.5) but not
    // ones with x-user-token, and some (Varnish by default) store a 200 that
    // says nothing: without this, GET /locations could be served to another
    // organization from a proxy in front of us.
    if (!reply.hasHeader('cache-control') && carriesCredentials(request.headers)) reply.header('cache-control', 'no-store');
    done(null, payload);
  });

  acceptEmptyJsonBody(app);
  // Fastify reads text/plain as a string by default, which every JSON route
  // then refused as "body must be object"; without the parser it is the same
  // 415 problem as any other non-JSON type. (The platform's subscribe routes
  // read any type as JSON; the OAuth routes answer invalid_request.)
  app.removeContentTypeParser('text/plain');
  await app.register(problemDetails);
  await app.register(rejectNul);
  // Before any route: it completes each route's querystring schema as the route is added.
  await app.register(rejectUndeclaredQuery);
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
  await app.register(oauthPlugin, { csrf: keyed.csrf, refreshSuccessors: keyed.refreshSuccessors });
  await app.register(webPlugin, { csrf: keyed.csrf });
  await app.register(metricsPlugin, { ...(options.metrics ? { metrics: options.metrics } : {}), sources: gaugeSources(app.ownerDb) });
  await app.register(callsRoutes);
  await app.register(agentsRoutes);
  await app.register(webhooksRoutes, { webhookSecrets: keyed.webhookSecrets });
  await app.register(auditEventsRoutes);
  await app.register(mcpPlugin);
  return app;
}

/** What /metrics' gauges read at scrape time, on the owner's pool: the delivery queue, the circuits, the alert e-mails waiting. */
function gaugeSources(ownerDb: Pool): GaugeSources {
  return {
    queueDepthSource: () => countQueuedDeliveries(ownerDb),
    circuitStateSource: () => countCircuitStates(ownerDb),
    alertsWaitingSource: () => countWaitingEmails(ownerDb),
  };
}
