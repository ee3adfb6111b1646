// Every API error code, declared literally (one line each, grouped by area).
// Rendered as RFC 9457 problem+json by src/http/problem-details.plugin.ts;
// documented in docs/errors.md (a test keeps the two in step).
import createError from '@fastify/error';

// Request
export const REQUEST_VALIDATION = createError('REQUEST_VALIDATION', 'The request is invalid', 400);
export const REQUEST_INVALID_JSON = createError('REQUEST_INVALID_JSON', 'The request body is not valid JSON', 400);
export const REQUEST_BODY_TOO_LARGE = createError('REQUEST_BODY_TOO_LARGE', 'The request body exceeds %s bytes', 413);
export const REQUEST_UNSUPPORTED_MEDIA_TYPE = createError('REQUEST_UNSUPPORTED_MEDIA_TYPE', 'Unsupported Content-Type: %s', 415);
// (the router refuses an overlong path segment before any route runs)
export const REQUEST_URL_TOO_LONG = createError('REQUEST_URL_TOO_LONG', 'A path segment of the URL is too long', 414);
export const REQUEST_RATE_LIMITED = createError('REQUEST_RATE_LIMITED', 'Too many requests; retry after %s seconds', 429);
export const NOT_FOUND = createError('NOT_FOUND', '%s', 404);
export const INTERNAL = createError('INTERNAL', 'An unexpected error occurred', 500);
export const NOT_READY = createError('NOT_READY', 'Not ready: %s', 503);
// (the database cannot be reached: connection refused or dropped, pool timeout; Retry-After says when to retry)
export const SERVICE_UNAVAILABLE = createError(
  'SERVICE_UNAVAILABLE',
  'The service is temporarily unavailable; retry after %s seconds',
  503,
);

// Authentication
export const AUTH_INVALID_CREDENTIALS = createError('AUTH_INVALID_CREDENTIALS', 'Email or password is incorrect', 401);
export const AUTH_TOKEN_MISSING = createError('AUTH_TOKEN_MISSING', 'The x-user-token header is required', 401);
export const AUTH_TOKEN_INVALID = createError('AUTH_TOKEN_INVALID', 'The token is invalid, expired or revoked', 401);
export const AUTH_NO_ORGANIZATION = createError('AUTH_NO_ORGANIZATION', 'The user belongs to no active organization', 403);
export const AUTH_NOT_A_MEMBER = createError('AUTH_NOT_A_MEMBER', 'The user is not a member of organization %s', 403);

// Locations and service areas
export const LOCATION_NOT_FOUND = createError('LOCATION_NOT_FOUND', 'Location %s not found', 404);
export const LOCATION_PRIMARY_CONFLICT = createError(
  'LOCATION_PRIMARY_CONFLICT',
  'The primary location changed concurrently; retry the request',
  409,
);
export const SERVICE_AREA_NOT_FOUND = createError('SERVICE_AREA_NOT_FOUND', 'Service area %s not found', 404);

// OAuth platform guard (RFC 6750 bearer token + x-client-id + x-client-secret)
export const OAUTH_TOKEN_MISSING = createError('OAUTH_TOKEN_MISSING', 'An access token is required: Authorization: Bearer <token>', 401);
export const OAUTH_TOKEN_INVALID = createError(
  'OAUTH_TOKEN_INVALID',
  'The access token is invalid, expired or revoked, or its user or organization is inactive',
  401,
);
export const OAUTH_CLIENT_MISSING = createError('OAUTH_CLIENT_MISSING', 'The x-client-id and x-client-secret headers are required', 401);
export const OAUTH_CLIENT_INVALID = createError(
  'OAUTH_CLIENT_INVALID',
  'x-client-id and x-client-secret do not match the client the access token was issued to',
  401,
);
export const OAUTH_INSUFFICIENT_SCOPE = createError('OAUTH_INSUFFICIENT_SCOPE', 'The access token lacks the %s scope', 403);

// Calls
export const CALL_NOT_FOUND = createError('CALL_NOT_FOUND', 'Call %s does not exist', 404);
export const CALL_ALREADY_COMPLETED = createError('CALL_ALREADY_COMPLETED', 'Call %s is already completed', 409);
export const AGENT_NOT_FOUND = createError('AGENT_NOT_FOUND', 'Agent %s does not exist', 404);
export const AGENTS_FORBIDDEN_ROLE = createError(
  'AGENTS_FORBIDDEN_ROLE',
  "Agents are created and renamed by the organization's owners and admins; this user is a %s",
  403,
);
// (Idempotency-Key on POST /calls and POST /calls/{id}/complete; a malformed key is REQUEST_VALIDATION naming the header)
export const IDEMPOTENCY_KEY_REUSED = createError(
  'IDEMPOTENCY_KEY_REUSED',
  'The Idempotency-Key was already used with a different request body (or on another endpoint); use a new key for a new request',
  422,
);
export const IDEMPOTENCY_KEY_IN_PROGRESS = createError(
  'IDEMPOTENCY_KEY_IN_PROGRESS',
  'A request with this Idempotency-Key is still being processed; retry after %s seconds',
  409,
);

// Webhooks
export const WEBHOOK_PORT_NOT_ALLOWED = createError(
  'WEBHOOK_PORT_NOT_ALLOWED',
  'The hookUrl port is not allowed (WEBHOOK_ALLOWED_PORTS)',
  400,
);
export const WEBHOOK_SUBSCRIPTION_NOT_FOUND = createError('WEBHOOK_SUBSCRIPTION_NOT_FOUND', 'Webhook subscription %s does not exist', 404);
export const WEBHOOK_SUBSCRIPTION_DISABLED = createError(
  'WEBHOOK_SUBSCRIPTION_DISABLED',
  'Webhook subscription %s is disabled; enable it first',
  409,
);
export const WEBHOOK_SUBSCRIPTION_GRANT_ENDED = createError(
  'WEBHOOK_SUBSCRIPTION_GRANT_ENDED',
  "Webhook subscription %s cannot be re-enabled: the app's access it was made under has ended; the app must be connected again and subscribe anew",
  409,
);
export const WEBHOOK_SUBSCRIPTION_URL_INVALID = createError(
  'WEBHOOK_SUBSCRIPTION_URL_INVALID',
  'Webhook subscription %s cannot be re-enabled: its URL holds a control character, a space or a non-ASCII character; delete it, and the app subscribes a corrected URL',
  409,
);
// (an organization's active subscriptions are at WEBHOOK_MAX_SUBSCRIPTIONS: subscribing a new URL, or re-enabling one)
export const WEBHOOK_SUBSCRIPTION_LIMIT = createError(
  'WEBHOOK_SUBSCRIPTION_LIMIT',
  'The organization already has %s active webhook subscriptions, its limit; unsubscribe or delete one to make room',
  409,
);
export const WEBHOOK_DELIVERY_NOT_FOUND = createError('WEBHOOK_DELIVERY_NOT_FOUND', 'Webhook delivery %s does not exist', 404);
export const WEBHOOK_DELIVERY_ACCESS_ENDED = createError(
  'WEBHOOK_DELIVERY_ACCESS_ENDED',
  "Webhook delivery %s was dropped unsent when the app's access ended; such a delivery is never sent, by redelivery or recover, even after the app connects again",
  409,
);
export const WEBHOOK_DELIVERY_IN_FLIGHT = createError(
  'WEBHOOK_DELIVERY_IN_FLIGHT',
  'Webhook delivery %s is being sent right now; try again when the attempt ends',
  409,
);

// Audit log
export const AUDIT_FORBIDDEN_ROLE = createError(
  'AUDIT_FORBIDDEN_ROLE',
  "The audit log is for the organization's owners and admins; this user is a %s",
  403,
);
