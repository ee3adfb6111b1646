export const CALL_COMPLETED = 'call.completed';
export function callCompletedEvent(call) {
    return {
        id: call.id,
        organization_id: call.organization_id,
        created_at: call.created_at.toISOString(),
        summary: call.summary,
        duration_seconds: call.duration_seconds,
        agent_id: call.agent_id,
    };
}
//# sourceMappingURL=call-event.js.map