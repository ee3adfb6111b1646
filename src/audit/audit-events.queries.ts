// The audit log's statements. Every event is written by the database function
// app_audit_event (migrations/0038_audit_events.sql): here for the changes
// TypeScript makes, in the triggers for those SQL functions and the delivery
// engine make. A writer runs in the transaction of its change.
import type { Queryable } from '../db/pool.ts';
import type { AuditActor } from './audit-actor.ts';

export type AuditEventType =
  | 'grant.created'
  | 'grant.revoked'
  | 'subscription.created'
  | 'subscription.enabled'
  | 'subscription.deleted'
  | 'subscription.disabled'
  | 'subscription.secret_changed'
  | 'circuit.opened'
  | 'circuit.closed'
  | 'deliveries.recovered'
  | 'delivery.redelivered'
  | 'alert.sent';

export const AUDIT_EVENT_TYPES: readonly AuditEventType[] = [
  'grant.created',
  'grant.revoked',
  'subscription.created',
  'subscription.enabled',
  'subscription.deleted',
  'subscription.disabled',
  'subscription.secret_changed',
  'circuit.opened',
  'circuit.closed',
  'deliveries.recovered',
  'delivery.redelivered',
  'alert.sent',
];

export type AuditSubjectType = 'client' | 'subscription' | 'delivery';

/**
 * The actor of the rest of this transaction, for the events the triggers
 * write (a subscription created, enabled or disabled, its circuit reset, a
 * grant revoked by a user): they cannot see the request. Run first in the
 * transaction of the change; unset, the triggers name the delivery worker.
 */
export async function actAs(db: Queryable, actor: AuditActor): Promise<void> {
  await db.query('SELECT app_audit_act_as($1, $2, $3)', [actor.type, actor.id, actor.label]);
}

/** SQL for app_audit_event's actor arguments from three parameters (type, id, label; a client's label looked up). */
export function actorArguments(type: string, id: string, label: string): string {
  return `${type}, ${id}, coalesce(${label}, (SELECT c.name FROM oauth_clients c WHERE ${type} = 'client' AND c.client_id = ${id}))`;
}

/** An actor as the values of actorArguments' three parameters, in its order. */
export function actorValues(actor: AuditActor): (string | null)[] {
  return [actor.type, actor.id, actor.label];
}

/** One event, for a change made by the statements before it in this transaction. */
export async function writeAuditEvent(
  db: Queryable,
  event: {
    organizationId: string;
    type: AuditEventType;
    actor: AuditActor;
    subjectType: AuditSubjectType;
    subjectId: string;
    reason?: string | null;
    details?: Record<string, unknown>;
  },
): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT app_audit_event($1, $2, ${actorArguments('$3::text', '$4::text', '$5::text')}, $6, $7, $8, $9) AS id`,
    [
      event.organizationId,
      event.type,
      event.actor.type,
      event.actor.id,
      event.actor.label,
      event.subjectType,
      event.subjectId,
      event.reason ?? null,
      JSON.stringify(event.details ?? {}),
    ],
  );
  return rows[0]!.id;
}

export interface AuditEventRow {
  id: string;
  type: AuditEventType;
  occurred_at: Date;
  actor_type: 'user' | 'client' | 'system';
  actor_id: string | null;
  actor_label: string;
  subject_type: AuditSubjectType;
  subject_id: string;
  reason: string | null;
  details: Record<string, unknown>;
}

export interface AuditEventFilters {
  types?: readonly AuditEventType[] | undefined;
  since?: Date | undefined;
  /** One subject's events (a subscription's page). */
  subjectId?: string | undefined;
}

/**
 * Tenant query (withOrg): the current organization's events, newest first.
 * `afterId` is the last event of the previous page (keyset pagination, its
 * position read in SQL so microseconds are not lost).
 */
export async function listAuditEvents(
  db: Queryable,
  input: { limit: number; afterId?: string | undefined } & AuditEventFilters,
): Promise<AuditEventRow[]> {
  const { rows } = await db.query<AuditEventRow>(
    `SELECT id, type, occurred_at, actor_type, actor_id, actor_label, subject_type, subject_id, reason, details
       FROM audit_events
      WHERE organization_id = app_current_org()
        AND ($1::text[] IS NULL OR type = ANY ($1))
        AND ($2::timestamptz IS NULL OR occurred_at >= $2)
        AND ($3::text IS NULL OR subject_id = $3)
        AND ($4::uuid IS NULL OR (occurred_at, id) < (SELECT e.occurred_at, e.id FROM audit_events e WHERE e.id = $4))
      ORDER BY occurred_at DESC, id DESC
      LIMIT $5`,
    [input.types ?? null, input.since ?? null, input.subjectId ?? null, input.afterId ?? null, input.limit],
  );
  return rows;
}

/** Tenant query (withOrg): whether the event is the current organization's (a cursor from a previous page). */
export async function auditEventExists(db: Queryable, id: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM audit_events WHERE id = $1', [id]);
  return rows.length > 0;
}

/** Maintenance (owner role): removes up to `batch` events that occurred before `before`, oldest first; how many. */
export async function deleteAuditEventsBefore(db: Queryable, before: Date, batch: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM audit_events
      WHERE id IN (SELECT id FROM audit_events WHERE occurred_at < $1 ORDER BY occurred_at LIMIT $2)`,
    [before, batch],
  );
  return rowCount ?? 0;
}
