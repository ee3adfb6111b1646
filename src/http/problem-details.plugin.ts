// One error handler for the whole API: RFC 9457 application/problem+json.
// Validation failures list {field, message}; nothing internal (stack, SQL,
// constraint names) ever reaches the client. Unexpected faults are logged
// with the request id, which the 500 answer carries.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { DATABASE_RETRY_AFTER_SECONDS, outageLog } from '../db/availability.ts';
import { errorStatus } from './error-status.ts';
import * as errors from '../errors.ts';
import { UUID_PATTERN } from './schemas.ts';

export interface FieldError {
  field: string;
  message: string;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: FieldError[];
  request_id?: string;
  /** RFC 6750 §3.1 error code, on bearer-token failures (also in WWW-Authenticate). */
  error?: string;
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** An error thrown on purpose may carry field errors for the problem body. */
export class ValidationProblem extends errors.REQUEST_VALIDATION {
  /** `problemCode`: a 400 code more specific than REQUEST_VALIDATION (e.g. WEBHOOK_PORT_NOT_ALLOWED). */
  readonly fieldErrors: FieldError[];
  readonly problemCode: string;
  constructor(fieldErrors: FieldError[], problemCode = 'REQUEST_VALIDATION') {
    super();
    this.fieldErrors = fieldErrors;
    this.problemCode = problemCode;
    this.message = fieldErrors.map((e) => `${e.field} ${e.message}`).join('; ');
  }
}

interface AjvIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
  /** Present because the validators run with `verbose` (src/http/validation.ts). */
  parentSchema?: Record<string, unknown>;
}

/**
 * Ajv's messages quote regular expressions and say "equal to constant"; a
 * client reads what the value must be instead. A schema may carry its own
 * wording for a failed pattern or length in `x-error-message`.
 */
function readableMessage(issue: AjvIssue): string | undefined {
  const custom = issue.parentSchema?.['x-error-message'];
  if (typeof custom === 'string' && ['pattern', 'minLength', 'maxLength'].includes(issue.keyword)) return custom;
  if (issue.keyword === 'format' && issue.params.format === 'uuid') return 'must be a UUID';
  if (issue.keyword === 'pattern' && issue.params.pattern === UUID_PATTERN) return 'must be a UUID';
  if (issue.keyword === 'pattern' && issue.params.pattern === '\\S') return 'must not be blank';
  // An empty label fails its minimum length and its pattern: one message says both.
  if (issue.keyword === 'minLength' && issue.params.limit === 1 && issue.parentSchema?.pattern === '\\S') return 'must not be blank';
  if (issue.keyword === 'const') return `must be ${String(issue.params.allowedValue)}`;
  if (issue.keyword === 'enum' && Array.isArray(issue.params.allowedValues))
    return `must be one of ${issue.params.allowedValues.join(', ')}`;
  return undefined;
}

function withoutRepeats(fieldErrors: FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return fieldErrors.filter((e) => {
    const key = `${e.field}\u0000${e.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * "/address/city" → "address.city"; a missing or unknown property names itself.
 * An `if` failure only wraps the failures of its `then`/`else`, which are
 * listed on their own, so it is left out.
 */
export function fieldErrorsFromAjv(issues: AjvIssue[], part: string | undefined): FieldError[] {
  return withoutRepeats(
    issues
      .filter((issue) => issue.keyword !== 'if')
      .map((issue) => {
        const segments = issue.instancePath.split('/').filter(Boolean);
        if (issue.keyword === 'required') segments.push(String(issue.params.missingProperty));
        if (issue.keyword === 'dependentRequired' || issue.keyword === 'dependencies') {
          segments.push(String(issue.params.missingProperty));
          return { field: segments.join('.'), message: `is required when ${String(issue.params.property)} is given` };
        }
        if (issue.keyword === 'additionalProperties') {
          segments.push(String(issue.params.additionalProperty));
          return { field: segments.join('.'), message: 'is not an allowed field' };
        }
        const field = segments.join('.') || (part === 'body' ? 'body' : (part ?? 'request'));
        const message = issue.keyword === 'required' ? 'is required' : (readableMessage(issue) ?? issue.message ?? 'is invalid');
        return { field, message };
      }),
  );
}

export function problemType(code: string): string {
  return `/problems/${code.toLowerCase().replace(/_/g, '-')}`;
}

export function sendProblem(reply: FastifyReply, status: number, code: string, detail: string, extra: Partial<Problem> = {}) {
  const body: Problem = { type: problemType(code), title: TITLES[status] ?? 'Error', status, detail, code, ...extra };
  return reply.code(status).type('application/problem+json').send(body);
}

/**
 * The problem for an error answered with a 4xx `status` (errorStatus): its
 * own code, or the code of what Fastify refused.
 */
function refusalProblem(
  error: FastifyError,
  request: FastifyRequest,
  status: number,
): { status: number; code: string; detail: string; fieldErrors?: FieldError[] } {
  if (error.validation) {
    const fieldErrors = fieldErrorsFromAjv(error.validation as AjvIssue[], error.validationContext);
    return { status: 400, code: 'REQUEST_VALIDATION', detail: fieldErrors.map((e) => `${e.field} ${e.message}`).join('; '), fieldErrors };
  }
  if (error instanceof ValidationProblem) {
    return { status: 400, code: error.problemCode, detail: error.message, fieldErrors: error.fieldErrors };
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return {
        status: 413,
        code: 'REQUEST_BODY_TOO_LARGE',
        detail: `The request body exceeds ${request.routeOptions.bodyLimit ?? 65536} bytes`,
      };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return {
        status: 400,
        code: 'REQUEST_INVALID_JSON',
        detail: 'The request body is not valid JSON',
        fieldErrors: [{ field: 'body', message: 'is not valid JSON' }],
      };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { status: 415, code: 'REQUEST_UNSUPPORTED_MEDIA_TYPE', detail: 'Send the body as application/json' };
  }
  if (error.code && !error.code.startsWith('FST_')) return { status, code: error.code, detail: error.message };
  return { status, code: status === 404 ? 'NOT_FOUND' : 'REQUEST_VALIDATION', detail: error.message };
}

/**
 * Fastify's `frameworkErrors` hook: the router refuses a URL it cannot
 * decode, or a path parameter over its length limit, before any route (and
 * so before the error handler) runs; without this the answer is Fastify's own
 * `{error, code, message}` body instead of a problem.
 */
export function frameworkErrorProblem(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  reply.header('x-request-id', request.id);
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return sendProblem(reply, 414, 'REQUEST_URL_TOO_LONG', 'A path segment of the URL is too long');
  }
  return sendProblem(reply, 400, 'REQUEST_VALIDATION', 'The URL is not valid: it holds a malformed percent-encoding', {
    errors: [{ field: 'path', message: 'is not a valid URL' }],
  });
}

async function problemDetails(app: FastifyInstance) {
  app.decorate('databaseOutage', outageLog(app.db, app.log, 'http'));

  app.setErrorHandler(function handleError(error: FastifyError, request, reply) {
    const status = errorStatus(request, reply, error);
    if (status === 503) {
      const unavailable = new errors.SERVICE_UNAVAILABLE(DATABASE_RETRY_AFTER_SECONDS);
      return sendProblem(reply, 503, unavailable.code, unavailable.message);
    }
    if (status === 500) {
      return sendProblem(reply, 500, 'INTERNAL', `An unexpected error occurred; quote request id ${request.id}`, {
        request_id: request.id,
      });
    }
    const problem = refusalProblem(error, request, status);
    const retryAfter = (error as { retryAfterSeconds?: unknown }).retryAfterSeconds;
    // A refusal that passes with time (a rate limit, a request still in progress) says when to retry.
    if ((problem.status === 429 || problem.status === 409) && typeof retryAfter === 'number')
      reply.header('retry-after', String(retryAfter));
    const oauthError = (error as { oauthError?: unknown }).oauthError;
    // RFC 9110 §15.5.2: a 401 carries a challenge. The bearer guards set a
    // detailed one (RFC 6750 §3); the x-user-token and login 401s get the
    // plain one (docs/interface.md §5.2).
    if (problem.status === 401 && !reply.hasHeader('www-authenticate')) reply.header('www-authenticate', 'Bearer realm="switchboard"');
    return sendProblem(reply, problem.status, problem.code, problem.detail, {
      ...(problem.fieldErrors ? { errors: problem.fieldErrors } : {}),
      ...(typeof oauthError === 'string' ? { error: oauthError } : {}),
    });
  });

  app.setNotFoundHandler(function handleNotFound(request, reply) {
    return sendProblem(reply, 404, 'NOT_FOUND', `No route for ${request.method} ${request.url.split('?')[0]}`);
  });
}

export default fp(problemDetails, { name: 'problem-details' });
