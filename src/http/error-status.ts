// The status an error is answered with, for every error handler whatever it
// renders (problem+json, the OAuth endpoints' JSON, HTML pages), so a refusal
// or a fault is the same status in every format. Each handler maps only the
// status (and its own codes) to its body.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable, type OutageLog } from '../db/availability.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The HTTP side's record of database outages (one log line per outage); decorated by the problem-details plugin. */
    databaseOutage: OutageLog;
  }
}

/**
 * When `error` means the database is away: records it (one log line per
 * outage), sets Retry-After and returns true. Also for a caller that answers
 * in its own way (the readiness probe).
 */
export function isDatabaseOutage(request: FastifyRequest, reply: FastifyReply, error: unknown): boolean {
  if (!isDatabaseUnavailable(error)) return false;
  request.server.databaseOutage.failed(error);
  reply.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS));
  return true;
}

/**
 * 503 when the database is away (isDatabaseOutage); the error's own status
 * when it is a 4xx, a refusal meant by the code or by Fastify; anything else
 * is 500, logged as an unhandled error (the line carries the request id,
 * which every 500 answer quotes).
 */
export function errorStatus(request: FastifyRequest, reply: FastifyReply, error: unknown): number {
  if (isDatabaseOutage(request, reply, error)) return 503;
  const status = (error as { statusCode?: unknown }).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) return status;
  request.log.error({ err: error }, 'unhandled error');
  return 500;
}
