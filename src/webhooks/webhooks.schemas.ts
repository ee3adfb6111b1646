import { Type } from '@sinclair/typebox';
import { IdParams, PageCursor, ProblemSchema, Uuid } from '../http/schemas.ts';
import { FilterProperties, FiltersSchema } from '../calls/call-details.schemas.ts';
import { HOOK_URL_MAX_LENGTH } from '../ssrf/check-hook-url.ts';
import { BREAKER_THRESHOLD, MAX_IN_FLIGHT_PER_SUBSCRIPTION } from './worker/endpoint-health.ts';

const Timestamp = Type.String({ format: 'date-time' });
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

// Printable ASCII without leading or trailing spaces: it is sent verbatim as a
// header value, and HTTP strips surrounding whitespace from header values.
export const SECRET_PATTERN = '^[\\x21-\\x7e](?:[\\x20-\\x7e]{0,254}[\\x21-\\x7e])?$';

export const SubscribeBody = Type.Object(
  {
    hookUrl: Type.String({
      minLength: 1,
      description: `public https URL that receives deliveries (at most ${HOOK_URL_MAX_LENGTH} characters)`,
    }),
    event: Type.Optional(Type.Literal('call.completed', { description: 'defaults to call.completed' })),
    filters: Type.Optional(
      Type.Object(FilterProperties, {
        additionalProperties: false,
        description:
          'only calls that match every filter given are delivered. Subscribing the URL again with filters replaces them, ' +
          'without filters keeps them, with {} clears them',
      }),
    ),
    secret: Type.Optional(
      Type.String({
        pattern: SECRET_PATTERN,
        'x-error-message': 'must be 1 to 256 printable ASCII characters, without leading or trailing spaces',
        description:
          '1 to 256 printable ASCII characters, sent back verbatim in X-Signature and the key of webhook-signature. ' +
          'A Standard Webhooks secret, `whsec_` then padded standard base64 of a 24 to 64 byte key, is keyed with the ' +
          'decoded bytes, so the Standard Webhooks libraries verify with the secret exactly as given (400 naming `secret` ' +
          'when what follows `whsec_` is not such base64); any other secret is keyed with its own UTF-8 bytes',
      }),
    ),
  },
  { additionalProperties: false },
);

export const UnsubscribeBody = Type.Object(
  { hookUrl: Type.String({ minLength: 1, description: 'the exact URL given at subscription' }) },
  { additionalProperties: false },
);

/** Interface §2.1. */
export const SubscriptionSummarySchema = Type.Object({
  id: Uuid,
  event: Type.String(),
  callback_url: Type.String(),
  filters: FiltersSchema,
});

export const CircuitSchema = Type.Object(
  {
    state: Type.Union([Type.Literal('closed'), Type.Literal('open'), Type.Literal('probing')], {
      description:
        `closed: deliveries are sent. open: after ${BREAKER_THRESHOLD} unhealthy attempts in a row (time-out, no connection, TLS failure, ` +
        '429 or 5xx) nothing is sent to this URL until next_probe_at. probing: that wait is over, and one attempt at a time ' +
        'is sent as a probe; a healthy answer closes the circuit, another failure opens it again for the next retry delay',
    }),
    since: Type.Union([Timestamp, Type.Null()], { description: 'when the circuit entered its current state; null if it never opened' }),
    next_probe_at: Type.Union([Timestamp, Type.Null()], {
      description:
        'while open: when the next attempt (a probe) may be sent; while probing: when the wait ended (a probe is due or under way); null while closed',
    }),
    consecutive_failures: Type.Integer({ minimum: 0, description: 'unhealthy attempts since the last healthy answer' }),
    concurrency_limit: Type.Integer({
      minimum: 1,
      description:
        'attempts to this URL allowed in flight at once now, across all workers: 1 after an unhealthy attempt, ' +
        `one more per healthy answer, up to ${MAX_IN_FLIGHT_PER_SUBSCRIPTION} (the full cap)`,
    }),
  },
  { description: "the receiver's health as the delivery workers see it: the circuit breaker and the adaptive concurrency limit" },
);

export const SubscriptionSchema = Type.Object({
  id: Uuid,
  event: Type.String(),
  callback_url: Type.String(),
  filters: FiltersSchema,
  client_id: Type.String({ description: 'the OAuth client (platform) that subscribed' }),
  status: Type.Union([Type.Literal('active'), Type.Literal('disabled')]),
  has_secret: Type.Boolean(),
  secret_format: Type.Union([Type.Literal('plain'), Type.Literal('whsec'), Type.Null()], {
    description:
      "the key of webhook-signature: plain, the secret's own UTF-8 bytes; whsec, the base64 after `whsec_` decoded " +
      '(a whsec_ secret given since 0.2.0); null without a secret',
  }),
  failing_since: NullableTimestamp,
  disabled_at: NullableTimestamp,
  disabled_reason: Type.Union(
    [
      Type.Literal('delivery_failures'),
      Type.Literal('grant_revoked'),
      Type.Literal('user_deactivated'),
      Type.Literal('organization_deactivated'),
      Type.Literal('membership_removed'),
      Type.Literal('invalid_url'),
      Type.Null(),
    ],
    {
      description:
        "why the subscription is disabled: five days of failed deliveries, the app's access ended (grant revoked; user or organization deactivated; membership removed), " +
        'or invalid_url: its URL, stored before 0.2.0, holds a control character, a space or a non-ASCII character (it cannot be re-enabled; delete it)',
    },
  ),
  created_at: Timestamp,
  updated_at: Timestamp,
  circuit: CircuitSchema,
});

/**
 * GET /webhooks's answer: the plain array the platform and the interface
 * document expect, with the organization's use of WEBHOOK_MAX_SUBSCRIPTIONS
 * in two headers (docs/decisions.md, "Subscription limit").
 */
export const SUBSCRIPTION_COUNT_HEADER = 'subscription-count';
export const SUBSCRIPTION_LIMIT_HEADER = 'subscription-limit';
export const SubscriptionListSchema = Type.Array(SubscriptionSchema, {
  description: 'the subscriptions the caller may see',
  headers: {
    'Subscription-Count': {
      type: 'integer',
      description: "the organization's active subscriptions, every app's (a platform still lists only its own)",
    },
    'Subscription-Limit': {
      type: 'integer',
      description:
        'the most active subscriptions the organization may have (WEBHOOK_MAX_SUBSCRIPTIONS); past it subscribing a new URL is 409',
    },
  },
});

export const SubscriptionLimitProblem = Type.Object(ProblemSchema.properties, {
  description:
    'WEBHOOK_SUBSCRIPTION_LIMIT: the organization already has WEBHOOK_MAX_SUBSCRIPTIONS active subscriptions (the detail names the number); unsubscribe or delete one first',
});

export const UnsubscribeResponse = Type.Object({ success: Type.Boolean() });

export const AttemptSchema = Type.Object({
  id: Uuid,
  delivery_id: Uuid,
  call_id: Uuid,
  attempt: Type.Integer({ description: 'X-Delivery-Attempt of this attempt' }),
  attempted_at: Timestamp,
  status_code: Type.Union([Type.Integer(), Type.Null()]),
  latency_ms: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()], {
    description:
      'timeout, connection, tls, blocked_address, blocked_port (the port is outside WEBHOOK_ALLOWED_PORTS), invalid_url, lease_expired or internal',
  }),
  error_message: Type.Union([Type.String(), Type.Null()]),
  response_body: Type.Union([Type.String(), Type.Null()], { description: 'the first 4 KiB of the answer' }),
  outcome: Type.String({ description: 'succeeded, retrying, failed, subscription_removed or superseded' }),
  delivery_status: Type.String({ description: 'current status of the delivery: pending, succeeded or failed' }),
  trace_id: Type.String({
    pattern: '^[0-9a-f]{32}$',
    description:
      "the call's W3C trace id, sent in this attempt's traceparent header (docs/interface.md §6.1): find the attempt's spans with it",
  }),
});

export const DeliverySchema = Type.Object({
  id: Uuid,
  subscription_id: Uuid,
  call_id: Uuid,
  event: Type.String(),
  status: Type.String(),
  attempts: Type.Integer(),
  next_attempt_at: NullableTimestamp,
  created_at: Timestamp,
  finished_at: NullableTimestamp,
});

export const AttemptsQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  cursor: Type.Optional(PageCursor),
});

export { IdParams, ProblemSchema };

export const RecoverBody = Type.Object(
  {
    since: Type.String({
      format: 'date-time',
      description: 'redeliver the failed deliveries created at or after this time (RFC 3339, within the last 30 days, not in the future)',
    }),
  },
  { additionalProperties: false },
);

export const RecoverResponse = Type.Object({
  subscription_id: Uuid,
  since: Timestamp,
  requeued: Type.Integer({
    minimum: 0,
    description: 'failed deliveries queued to be sent again now (at most 1000 per call, oldest first)',
  }),
  more: Type.Boolean({ description: 'more failed deliveries since `since` remain: call again to queue the next batch' }),
});
