// pino options for Fastify: JSON lines with the request id, and no secrets.
// Credentials travel in headers and bodies, which are never logged; the
// redaction paths are a second line of defence, and query strings that may
// carry codes or tokens are masked in the logged URL.
import { randomUUID } from 'node:crypto';
import type { FastifyServerOptions } from 'fastify';

const SECRET_QUERY_PARAMS = /([?&](?:code|code_verifier|access_token|refresh_token|token|client_secret|password)=)[^&#]*/gi;

export function maskUrl(url: string): string {
  // Most URLs carry no parameter at all: skip the expression.
  if (!url.includes('=')) return url;
  return url.replace(SECRET_QUERY_PARAMS, '$1[redacted]');
}

export function loggerOptions(level: string, stream?: NodeJS.WritableStream): FastifyServerOptions['logger'] {
  return {
    level,
    ...(stream ? { stream } : {}),
    redact: {
      paths: [
        'req.headers.authorization', 'req.headers["x-user-token"]', 'req.headers["x-client-secret"]',
        'req.headers.cookie', 'res.headers["set-cookie"]', '*.password', '*.token', '*.client_secret', '*.secret',
      ],
      censor: '[redacted]',
    },
    serializers: {
      req(request) {
        return { method: request.method, url: maskUrl(request.url), remoteAddress: request.ip };
      },
    },
  };
}

const REQUEST_ID = /^[\w.-]{1,64}$/;

/** Honour a caller's x-request-id when it is sane, else make one. */
export function genReqId(request: { headers: Record<string, string | string[] | undefined> }): string {
  const incoming = request.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}
