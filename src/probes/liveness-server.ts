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

const BODY = '{"status":"ok"}';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

export function answerLiveness(request: IncomingMessage, response: ServerResponse): boolean {
  if (request.url !== '/healthz' || request.method !== 'GET') return false;
  // The same headers the Fastify route's answer carries (app.ts onSend).
  response.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': BODY.length,
    'x-request-id': genReqId(request),
    'x-content-type-options': 'nosniff',
  });
  response.end(BODY);
  return true;
}

/** Fastify's serverFactory: the HTTP/1.1 server Fastify would make, with the same timeouts, and the liveness answer first. */
export function livenessServerFactory(handler: Handler, options: FastifyServerOptions): http.Server {
  const server = http.createServer((request, response) => {
    if (!answerLiveness(request, response)) handler(request, response);
  });
  if (options.keepAliveTimeout !== undefined) server.keepAliveTimeout = options.keepAliveTimeout;
  if (options.requestTimeout !== undefined) server.requestTimeout = options.requestTimeout;
  if (options.connectionTimeout !== undefined) server.setTimeout(options.connectionTimeout);
  if (options.maxRequestsPerSocket) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
  return server;
}
