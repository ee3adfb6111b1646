// The HTTP server under Fastify, with GET /healthz answered before Fastify
// sees the request. Liveness means "this process's event loop answers", which
// is exactly what answering here shows; orchestrators probe it every few
// seconds from every node, so it gets none of the per-request work the API
// needs (request id and child logger, hooks, metrics, routing): with all of
// that, a probe cost about twice a bare Fastify route (docs/performance.md).
// The Fastify route of the same name stays for app.inject, the OpenAPI
// document and anything this path does not take (HEAD, a query string).
// /readyz (the database answers) goes through Fastify.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { FastifyServerOptions } from 'fastify';
import { genReqId } from '../http/logger.ts';
import { problemType } from '../http/problem-details.plugin.ts';

const BODY = '{"status":"ok"}';

/**
 * Liveness fails only once the process has given up and is about to exit (its
 * embedded PostgreSQL could not be brought back): a probing orchestrator sees
 * it even before the exit. `failure` says why.
 */
export interface Liveness {
  failure?: string;
}

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** The problem a failing liveness probe answers (the Fastify route sends the same). */
function livenessProblem(failure: string) {
  return {
    type: problemType('SERVICE_UNAVAILABLE'),
    title: 'Service Unavailable',
    status: 503,
    detail: failure,
    code: 'SERVICE_UNAVAILABLE',
  };
}

export function answerLiveness(request: IncomingMessage, response: ServerResponse, liveness: Liveness): boolean {
  if (request.url !== '/healthz' || request.method !== 'GET') return false;
  const failing = liveness.failure !== undefined;
  const body = failing ? JSON.stringify(livenessProblem(liveness.failure!)) : BODY;
  // The same headers the Fastify route's answer carries (app.ts onSend).
  response.writeHead(failing ? 503 : 200, {
    'content-type': failing ? 'application/problem+json; charset=utf-8' : 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-request-id': genReqId(request),
    'x-content-type-options': 'nosniff',
  });
  response.end(body);
  return true;
}

/** Fastify's serverFactory: the HTTP/1.1 server Fastify would make, with the same timeouts, and the liveness answer first. */
export function livenessServerFactory(liveness: Liveness) {
  return (handler: Handler, options: FastifyServerOptions): http.Server => {
    const server = http.createServer((request, response) => {
      if (!answerLiveness(request, response, liveness)) handler(request, response);
    });
    if (options.keepAliveTimeout !== undefined) server.keepAliveTimeout = options.keepAliveTimeout;
    if (options.requestTimeout !== undefined) server.requestTimeout = options.requestTimeout;
    if (options.connectionTimeout !== undefined) server.setTimeout(options.connectionTimeout);
    if (options.maxRequestsPerSocket) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
    return server;
  };
}
