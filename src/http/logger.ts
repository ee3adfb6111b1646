// pino options for Fastify: JSON lines with the request id, and no secrets.
// Credentials travel in headers and bodies, which are never logged; the
// censor below is a second line of defence, and query strings that may
// carry codes or tokens are masked in the logged URL.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import { stdSerializers } from 'pino';
import { activeTracing } from '../tracing/tracing.ts';

// Phone numbers (GET /calls?number=…) are personal data, masked like secrets.
const SECRET_QUERY_PARAMS =
  /([?&](?:code|code_verifier|access_token|refresh_token|token|client_secret|password|number|from_number|to_number)=)[^&#]*/gi;

export function maskUrl(url: string): string {
  // Most URLs carry no parameter at all: skip the expression.
  if (!url.includes('=')) return url;
  return url.replace(SECRET_QUERY_PARAMS, '$1[redacted]');
}

export const CENSORED = '[redacted]';

/**
 * Fields censored in every object of a log line's first level (and in its
 * `headers`): what pino's `redact` paths covered (`*.password`, `*.token`,
 * `*.client_secret`, `*.secret`, `req.headers.authorization`,
 * `req.headers["x-user-token"]`, `req.headers["x-client-secret"]`,
 * `req.headers.cookie`, `res.headers["set-cookie"]`), and more: the header
 * names anywhere at that level, any letter case.
 */
const SECRET_FIELDS = new Set([
  'password',
  'token',
  'client_secret',
  'secret',
  'authorization',
  'cookie',
  'set-cookie',
  'x-user-token',
  'x-client-secret',
]);

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function hasSecretField(value: Record<string, unknown>): boolean {
  for (const key in value) if (SECRET_FIELDS.has(key.toLowerCase())) return true;
  return false;
}

function censorFields(value: Record<string, unknown>): Record<string, unknown> {
  const copy = { ...value };
  for (const key of Object.keys(copy)) if (SECRET_FIELDS.has(key.toLowerCase())) copy[key] = CENSORED;
  return copy;
}

/** The value with its secret fields, and those of its `headers`, censored; the value itself when it has none (no copy). */
export function censor(value: unknown): unknown {
  if (!isObject(value)) return value;
  const headers = value.headers;
  const secretHeaders = isObject(headers) && hasSecretField(headers);
  if (!secretHeaders && !hasSecretField(value)) return value;
  const copy = censorFields(value);
  if (secretHeaders) copy.headers = censorFields(headers);
  return copy;
}

/**
 * Keys with a serializer, which decides what is written: `req` and `res`
 * (Fastify's: the status code alone) write fixed fields, `err` is censored
 * after pino's error serializer.
 */
const SERIALIZED = new Set(['req', 'res', 'err']);

/** The object with each first-level value censored (the keys with a serializer are left to it); the object itself when nothing is. */
function censorEach(object: Record<string, unknown>): Record<string, unknown> {
  let line = object;
  for (const key in object) {
    if (SERIALIZED.has(key)) continue;
    const value = object[key];
    const censored = censor(value);
    if (censored !== value) {
      if (line === object) line = { ...object };
      line[key] = censored;
    }
  }
  return line;
}

/**
 * A child logger's bindings are written on each of its lines without going
 * through formatters.log (pino applies its bindings formatter to the root's
 * alone), so every child is made through this: called on the root logger
 * before any child exists (buildApp, buildWorkerApp), every descendant
 * inherits it. Per request it looks at one string (the request id).
 */
export function censorChildBindings(logger: FastifyBaseLogger): void {
  const child = logger.child;
  logger.child = function censoredChild(this: FastifyBaseLogger, bindings, options) {
    return child.call(this, censorEach(bindings), options);
  } as FastifyBaseLogger['child'];
}

// Why not pino's `redact`: its library (@pinojs/redact) parses every path again
// on each line and wraps every key of every line, a measurable share of the
// server's busy time on POST /calls (docs/performance.md). The censor walks the keys of the line once.
export function loggerOptions(level: string, stream?: NodeJS.WritableStream): FastifyServerOptions['logger'] {
  return {
    level,
    ...traceLogFields(),
    ...(stream ? { stream } : {}),
    formatters: {
      // Runs before the serializers, on the object given to the log call.
      log: censorEach,
    },
    serializers: {
      // Fixed fields: no header, no body. (`res` stays Fastify's: the status code.)
      req(request) {
        return { method: request.method, url: maskUrl(request.url), remoteAddress: request.ip };
      },
      err(error) {
        return censor(withoutRowValues(stdSerializers.err(error))) as ReturnType<typeof stdSerializers.err>;
      },
    },
  };
}

/**
 * A PostgreSQL error's `detail` and `where` may quote the row it refused
 * ("Failing row contains (…)": phone numbers, a transcript): never logged.
 * Its message, code and constraint name say what failed.
 */
function withoutRowValues<T extends object>(serialized: T): T {
  if (!('routine' in serialized) || !('detail' in serialized || 'where' in serialized)) return serialized;
  const { detail: _detail, where: _where, ...rest } = serialized as T & { detail?: unknown; where?: unknown };
  return rest as T;
}

/**
 * While traces are exported, each line written with a span active carries
 * its `trace_id` and `span_id` (pino's mixin). Export off: no mixin at all,
 * nothing per line. pino merges a line's own fields into the object the
 * mixin returns, so it is a new one for every line: a shared one would keep
 * every earlier line's fields.
 */
export function traceLogFields(): { mixin?: () => object } {
  if (!activeTracing()) return {};
  return { mixin: () => activeTracing()?.logFields() ?? {} };
}

const REQUEST_ID = /^[\w.-]{1,64}$/;

/** Honour a caller's x-request-id when it is sane, else make one. */
export function genReqId(request: { headers: Record<string, string | string[] | undefined> }): string {
  const incoming = request.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}
