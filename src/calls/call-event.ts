// The call.completed event: exactly the six fields of docs/interface.md §2.3, in that
// order. The same object is the webhook body and a /calls/recent element, so
// the platform's sample has the shape of a live event.
export const CALL_COMPLETED = 'call.completed';

export interface CallCompletedEvent {
  id: string;
  organization_id: string;
  created_at: string;
  summary: string;
  duration_seconds: number;
  agent_id: string | null;
}
