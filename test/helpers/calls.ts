// What call tests compare the product's output with: the call.completed event
// built from a stored call, an organization's recent completed calls read
// directly (not through GET /calls/recent's statement), and which transaction
// wrote each call.
import type { CallCompletedEvent } from '../../src/calls/call-event.ts';
import type { CompletedCall } from '../../src/calls/call.ts';
import { CallCompletedEventSchema } from '../../src/calls/calls.schemas.ts';
import type { Pool } from '../../src/db/pool.ts';
import { withOrg } from '../../src/db/with-org.ts';
import { COLUMNS } from '../../src/calls/call-columns.queries.ts';

/**
 * The event of a stored call, built in TypeScript: the schema's fields in the
 * schema's order (CallCompletedEventSchema is the one description of the
 * shape), so JSON.stringify of it is the body app_call_event writes.
 */
export function callCompletedEvent(call: CompletedCall): CallCompletedEvent {
  const values: Record<string, unknown> = { ...call, created_at: call.created_at.toISOString() };
  return Object.fromEntries(Object.keys(CallCompletedEventSchema.properties).map((key) => [key, values[key]])) as CallCompletedEvent;
}

/** A stored call as the product reads it (with its url), or undefined. */
export async function storedCall(pool: Pool, id: string): Promise<CompletedCall | undefined> {
  const { rows } = await pool.query<{ organization_id: string }>('SELECT organization_id FROM calls WHERE id = $1', [id]);
  if (!rows[0]) return undefined;
  return withOrg(
    pool,
    rows[0].organization_id,
    async (db) => (await db.query<CompletedCall>(`SELECT ${COLUMNS} FROM calls WHERE id = $1`, [id])).rows[0],
  );
}

/** The organization's completed calls, newest first, as call.completed events. */
export async function recentCalls(pool: Pool, organizationId: string, limit: number): Promise<CallCompletedEvent[]> {
  const calls = await withOrg(
    pool,
    organizationId,
    async (db) =>
      (
        await db.query<CompletedCall>(
          `SELECT ${COLUMNS} FROM calls WHERE status = 'completed' ORDER BY created_at DESC, id DESC LIMIT $1`,
          [limit],
        )
      ).rows,
  );
  return calls.map(callCompletedEvent);
}

/**
 * The transaction that wrote each call (its row's xmin), in the order of
 * `ids`; undefined for a call not stored. Two calls share one exactly when
 * one statement batch wrote both (created_at, in milliseconds, can be equal
 * for two transactions).
 */
export async function writingTransactions(pool: Pool, ids: string[]): Promise<(string | undefined)[]> {
  const { rows } = await pool.query<{ id: string; xid: string }>('SELECT id, xmin::text AS xid FROM calls WHERE id = ANY ($1::uuid[])', [
    ids,
  ]);
  const byId = new Map(rows.map((row) => [row.id, row.xid]));
  return ids.map((id) => byId.get(id));
}
