// What call tests compare the product's output with: the call.completed event
// built field by field from a stored call, and an organization's recent
// completed calls read directly (not through GET /calls/recent's statement).
import type { CallCompletedEvent } from '../../src/calls/call-event.ts';
import type { CompletedCall } from '../../src/calls/calls.queries.ts';
import type { Pool } from '../../src/db/pool.ts';
import { withOrg } from '../../src/db/with-org.ts';

/** The event's six fields, in order, from the stored row. */
export function callCompletedEvent(call: CompletedCall): CallCompletedEvent {
  return {
    id: call.id,
    organization_id: call.organization_id,
    created_at: call.created_at.toISOString(),
    summary: call.summary,
    duration_seconds: call.duration_seconds,
    agent_id: call.agent_id,
  };
}

/** The organization's completed calls, newest first, as call.completed events. */
export async function recentCalls(pool: Pool, organizationId: string, limit: number): Promise<CallCompletedEvent[]> {
  const calls = await withOrg(pool, organizationId, async (db) => (await db.query<CompletedCall>(
    `SELECT id, organization_id, agent_id, status, created_at, completed_at, duration_seconds, summary
       FROM calls WHERE status = 'completed' ORDER BY created_at DESC, id DESC LIMIT $1`,
    [limit],
  )).rows);
  return calls.map(callCompletedEvent);
}
