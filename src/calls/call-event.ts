// The call.completed event: exactly the six fields of docs/interface.md §2.3, in that
// order. The same object is the webhook body and a /calls/recent element, so
// the platform's sample has the shape of a live event. PostgreSQL writes it
// (app_call_completed_event); CallCompletedEventSchema
// describes it, and test/calls/call-completed-event.test.ts holds the two equal.
import type { Static } from '@sinclair/typebox';
import type { CallCompletedEventSchema } from './calls.schemas.ts';

export type CallCompletedEvent = Static<typeof CallCompletedEventSchema>;
