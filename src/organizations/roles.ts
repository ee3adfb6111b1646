// The owner-or-admin rule, once: an organization's owners and admins oversee
// it (they read its audit log, on the API and on its pages, and they are the
// recipients of its alert e-mails); a plain member does not.
import type { Role } from './users.queries.ts';

/** Every role a member of an organization may have. */
export const ROLES: readonly Role[] = ['owner', 'admin', 'member'];

export const OWNER_OR_ADMIN: readonly Role[] = ['owner', 'admin'];

/** True for an owner or an admin; false for a member, and for no role at all (a platform's token). */
export function isOwnerOrAdmin(role: string | null | undefined): boolean {
  return OWNER_OR_ADMIN.includes(role as Role);
}

/** The rule in SQL, for a statement's `memberships.role IN (…)`: the same two roles, quoted. */
export const OWNER_OR_ADMIN_SQL = OWNER_OR_ADMIN.map((role) => `'${role}'`).join(', ');
