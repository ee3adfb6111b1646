// GET /audit-events and the Activity page: the organization's audit log,
// newest first, for its owners and admins (docs/interface.md, "Audit log").
import { isOwnerOrAdmin } from '../organizations/roles.ts';
import type { Principal } from '../auth/principal.ts';
import type { Pool } from '../db/pool.ts';
import { withOrg } from '../db/with-org.ts';
import * as errors from '../errors.ts';
import { ValidationProblem } from '../http/problem-details.plugin.ts';
import {
  AUDIT_EVENT_TYPES,
  auditEventExists,
  listAuditEvents,
  type AuditEventFilters,
  type AuditEventRow,
  type AuditEventType,
  type AuditSubjectType,
} from './audit-events.queries.ts';

export const AUDIT_PAGE_DEFAULT = 50;
export const AUDIT_PAGE_MAX = 100;

export interface AuditEventView {
  id: string;
  type: AuditEventType;
  occurred_at: string;
  actor: { type: 'user' | 'client' | 'system'; id: string | null; label: string };
  subject: { type: AuditSubjectType; id: string };
  reason: string | null;
  details: Record<string, unknown>;
}

export function auditEventView(row: AuditEventRow): AuditEventView {
  return {
    id: row.id,
    type: row.type,
    occurred_at: row.occurred_at.toISOString(),
    actor: { type: row.actor_type, id: row.actor_id, label: row.actor_label },
    subject: { type: row.subject_type, id: row.subject_id },
    reason: row.reason,
    details: row.details,
  };
}

/** Owners and admins read the audit log; a plain member gets AUDIT_FORBIDDEN_ROLE. */
export function canReadAuditLog(principal: Principal): boolean {
  return isOwnerOrAdmin(principal.session?.role);
}

export function requireAuditReader(principal: Principal): void {
  if (!canReadAuditLog(principal)) throw new errors.AUDIT_FORBIDDEN_ROLE(principal.session?.role ?? 'member');
}

/** `type` as given: one type, or several separated by commas; a bad one is a 400 naming the field. */
export function parseTypes(value: string | undefined): AuditEventType[] | undefined {
  if (value === undefined) return undefined;
  const types = value.split(',').map((t) => t.trim());
  for (const type of types) {
    if (!(AUDIT_EVENT_TYPES as readonly string[]).includes(type)) {
      throw new ValidationProblem([
        { field: 'type', message: `must be one of ${AUDIT_EVENT_TYPES.join(', ')}, or several separated by commas` },
      ]);
    }
  }
  return [...new Set(types as AuditEventType[])];
}

/** `since` (or another instant named `field`) as given: an ISO 8601 date-time (with its offset, or a plain date as UTC midnight); else a 400 naming the field. */
export function parseSince(value: string | undefined, field = 'since'): Date | undefined {
  if (value === undefined) return undefined;
  const iso = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2}))?$/i;
  const since = new Date(value);
  // Year 0 is a JavaScript date but no PostgreSQL one.
  if (!iso.test(value) || Number.isNaN(since.getTime()) || since.getUTCFullYear() < 1) {
    throw new ValidationProblem([{ field, message: 'must be an ISO 8601 date-time, such as 2026-01-31T00:00:00Z' }]);
  }
  return since;
}

/** One page of the organization's events, newest first; `nextCursor` is set when more may follow. */
export async function listAuditEventsPage(
  pool: Pool,
  principal: Principal,
  input: { limit: number; cursor?: string | undefined } & AuditEventFilters,
): Promise<{ events: AuditEventView[]; nextCursor: string | null }> {
  requireAuditReader(principal);
  const { limit, cursor } = input;
  return withOrg(pool, principal.organizationId, async (db) => {
    if (cursor !== undefined && !(await auditEventExists(db, cursor))) {
      throw new ValidationProblem([{ field: 'cursor', message: 'is not a cursor from a previous page' }]);
    }
    const rows = await listAuditEvents(db, {
      types: input.types,
      since: input.since,
      subjectId: input.subjectId,
      limit: limit + 1,
      afterId: cursor,
    });
    const page = rows.slice(0, limit);
    return { events: page.map(auditEventView), nextCursor: rows.length > limit ? page.at(-1)!.id : null };
  });
}
