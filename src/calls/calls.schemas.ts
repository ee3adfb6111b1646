import { Type } from '@sinclair/typebox';
import { IdParams, PageCursor, ProblemSchema, Uuid } from '../http/schemas.ts';
import { DURATION_MAX_SECONDS, SUMMARY_MAX_LENGTH } from './call-limits.ts';
import { CallDetailsOutput, CallDetailsProperties, FilterProperties } from './call-details.schemas.ts';
import { KEY_HEADER_PATTERN, KEY_MAX_LENGTH, KEY_RULE } from './idempotency.ts';

const Timestamp = Type.String({ format: 'date-time' });
const Summary = Type.String({ minLength: 1, maxLength: SUMMARY_MAX_LENGTH, description: 'text summary of the call' });
const Duration = Type.Integer({ minimum: 0, maximum: DURATION_MAX_SECONDS, description: 'call length in seconds' });

export const CallSchema = Type.Object({
  id: Uuid,
  organization_id: Uuid,
  agent_id: Type.Union([Uuid, Type.Null()]),
  status: Type.Union([Type.Literal('in_progress'), Type.Literal('completed')]),
  created_at: Timestamp,
  completed_at: Type.Union([Timestamp, Type.Null()]),
  duration_seconds: Type.Union([Type.Integer(), Type.Null()]),
  summary: Type.Union([Type.String(), Type.Null()]),
  ...CallDetailsOutput,
});

/** Interface §2.3: the call.completed webhook body, and each /calls/recent element. */
export const CallCompletedEventSchema = Type.Object(
  {
    id: Uuid,
    organization_id: Uuid,
    created_at: Timestamp,
    summary: Type.String(),
    duration_seconds: Type.Integer(),
    agent_id: Type.Union([Uuid, Type.Null()]),
    ...CallDetailsOutput,
  },
  { description: 'A completed call, exactly as the call.completed webhook delivers it' },
);

export const CreateCallBody = Type.Object(
  {
    agent_id: Type.Optional(Type.Union([Uuid, Type.Null()])),
    summary: Type.Optional(Summary),
    duration_seconds: Type.Optional(Duration),
    ...CallDetailsProperties,
  },
  { additionalProperties: false, description: 'Give summary and duration_seconds together to record a call that has already completed.' },
);

export const CompleteCallBody = Type.Object(
  { summary: Summary, duration_seconds: Duration, ...CallDetailsProperties },
  { additionalProperties: false, description: 'A detail given here replaces the one given when the call was created.' },
);

/** The Idempotency-Key request header of the two calls writes (src/calls/idempotency.ts). */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      pattern: KEY_HEADER_PATTERN,
      'x-error-message': KEY_RULE,
      description:
        `Makes a retry safe (IETF draft "The Idempotency-Key HTTP Header Field"): 1 to ${KEY_MAX_LENGTH} printable ASCII ` +
        'characters, as they are or as a quoted string ("…"), unique per request, such as a UUID. For 24 hours the same caller\'s ' +
        'next request with the same key and the same body gets the first answer again (same status and body, header ' +
        'Idempotent-Replayed: true) and records nothing; with another body it gets 422. A request that failed stores nothing. ' +
        "A key is its caller's (the OAuth grant of a platform request, or the user of an x-user-token): another caller of the " +
        'organization with the same key makes its own call.',
    }),
  ),
});

/**
 * The headers of the two call-writing POSTs: Idempotency-Key and W3C Trace
 * Context. A traceparent that is not one is ignored (a new trace begins), never
 * refused: the spec asks for that, so it has no pattern here.
 */
export const CallWriteHeaders = Type.Object({
  ...IdempotencyHeaders.properties,
  traceparent: Type.Optional(
    Type.String({
      description:
        'W3C Trace Context (`00-<trace id>-<parent id>-<flags>`): the call keeps it, and every delivery attempt of the call sends a ' +
        "traceparent in that trace (a completion's replaces the creation's). Without one (or a malformed one) the call gets a new trace id.",
    }),
  ),
  tracestate: Type.Optional(
    Type.String({ description: 'W3C tracestate, kept with the traceparent and passed on to every delivery attempt' }),
  ),
});

/** Problem answers of the Idempotency-Key rules, with their own descriptions in the API reference. */
export const KeyInProgressProblem = Type.Object(ProblemSchema.properties, {
  description:
    'IDEMPOTENCY_KEY_IN_PROGRESS: a request with the same Idempotency-Key is still being processed; retry after Retry-After seconds',
});
export const KeyReusedProblem = Type.Object(ProblemSchema.properties, {
  description: 'IDEMPOTENCY_KEY_REUSED: the Idempotency-Key was already used with a different request body (or on another endpoint)',
});

const NumberQuery = (description: string) =>
  Type.Optional(
    Type.String({
      maxLength: 64,
      description: `${description}: a phone number with its country code in any spelling, matched in E.164 (send + as %2B; a leading space is read as +)`,
    }),
  );
const Instant = (description: string) => Type.Optional(Type.String({ maxLength: 64, description }));

export const ListCallsQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  cursor: Type.Optional(PageCursor),
  status: Type.Optional(Type.Union([Type.Literal('in_progress'), Type.Literal('completed')])),
  number: NumberQuery('calls from or to this number'),
  from_number: NumberQuery('calls from this number'),
  to_number: NumberQuery('calls to this number'),
  direction: FilterProperties.direction,
  agent_id: FilterProperties.agent_id,
  location_id: FilterProperties.location_id,
  since: Instant('ISO 8601 date-time: calls created at or after it'),
  until: Instant('ISO 8601 date-time: calls created before it (exclusive)'),
});

export const RecentCallsQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  ...FilterProperties,
});

export { IdParams, ProblemSchema };
