// Who an audit event says made the change (docs/interface.md, "Audit log"):
// a signed-in user, an OAuth client acting for the organization, or a part of
// the system. Worked out here from the caller, passed to the database with
// every change (src/audit/audit-events.queries.ts).
import type { Principal } from '../auth/principal.ts';

export type AuditActorType = 'user' | 'client' | 'system';

export interface AuditActor {
  type: AuditActorType;
  /** A user's id, a client's client_id; null for the system. */
  id: string | null;
  /** A user's e-mail, the system part's name; null for a client, whose name the database looks up. */
  label: string | null;
}

export const WORKER: AuditActor = { type: 'system', id: null, label: 'worker' };
export const MAINTENANCE: AuditActor = { type: 'system', id: null, label: 'maintenance' };
export const COMMAND_LINE: AuditActor = { type: 'system', id: null, label: 'command line' };

/** The actor behind an authenticated request: its user, or the OAuth client it acts through. */
export function actorOf(principal: Principal): AuditActor {
  if (principal.kind === 'oauth') {
    if (!principal.clientId) throw new Error('an OAuth principal without its client');
    return { type: 'client', id: principal.clientId, label: null };
  }
  return { type: 'user', id: principal.userId, label: principal.session?.email ?? null };
}
