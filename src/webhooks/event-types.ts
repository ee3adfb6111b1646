// The event types a hook can subscribe to (docs/interface.md §2.3): one, the
// completed call, whose body is the call.completed event (calls/call-event.ts).
export const CALL_COMPLETED = 'call.completed';
