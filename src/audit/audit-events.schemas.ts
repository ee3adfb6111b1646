import { Type } from '@sinclair/typebox';
import { EMAIL_MAX_LENGTH } from '../organizations/users.queries.ts';
import { PageCursor, ProblemSchema, Uuid } from '../http/schemas.ts';
import { AUDIT_EVENT_TYPES } from './audit-events.queries.ts';
import { AUDIT_PAGE_DEFAULT, AUDIT_PAGE_MAX } from './audit-events.service.ts';

/** An actor's label is an e-mail, a client's name or a system label: an e-mail is the longest (audit_events CHECK). */
export const ACTOR_LABEL_MAX_LENGTH = EMAIL_MAX_LENGTH;
/** A subject's id: a client_id, a subscription's or a delivery's id (audit_events CHECK). */
export const SUBJECT_ID_MAX_LENGTH = 200;

export const ListAuditEventsQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: AUDIT_PAGE_MAX, default: AUDIT_PAGE_DEFAULT }),
  cursor: Type.Optional(PageCursor),
  type: Type.Optional(
    Type.String({
      maxLength: 1000,
      description: `one event type, or several separated by commas: ${AUDIT_EVENT_TYPES.join(', ')}`,
    }),
  ),
  since: Type.Optional(Type.String({ maxLength: 64, description: 'ISO 8601 date-time: events that occurred at or after it (inclusive)' })),
});

export const AuditEventSchema = Type.Object(
  {
    id: Uuid,
    type: Type.Union(AUDIT_EVENT_TYPES.map((t) => Type.Literal(t))),
    occurred_at: Type.String({ format: 'date-time' }),
    actor: Type.Object({
      type: Type.Union([Type.Literal('user'), Type.Literal('client'), Type.Literal('system')]),
      id: Type.Union([Type.String(), Type.Null()], { description: "a user's id, a client's client_id; null for the system" }),
      label: Type.String({
        maxLength: ACTOR_LABEL_MAX_LENGTH,
        description: "a user's e-mail, a client's name, or worker, maintenance, command line or migration",
      }),
    }),
    subject: Type.Object({
      type: Type.Union([Type.Literal('client'), Type.Literal('subscription'), Type.Literal('delivery')]),
      id: Type.String({ maxLength: SUBJECT_ID_MAX_LENGTH, description: "a client's client_id, a subscription's or a delivery's id" }),
    }),
    reason: Type.Union([Type.String(), Type.Null()], { description: 'null unless the type has reasons (docs/interface.md)' }),
    details: Type.Record(Type.String(), Type.Unknown(), {
      description: 'what a reader needs (hook URL, client name, counts); never a secret, token or password',
    }),
  },
  { description: 'One audit event: who changed what, or what the system did on its own' },
);

export { ProblemSchema };
