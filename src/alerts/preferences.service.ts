// A signed-in user's own alert e-mails in their current organization, on or
// off: what the preference page reads and changes. Only owners and admins
// get alerts (organizations/roles.ts), so only they have one to change.
import type { Pool } from '../db/pool.ts';
import { withOrg } from '../db/with-org.ts';
import { isOwnerOrAdmin } from '../organizations/roles.ts';
import { alertsEnabled, setAlertsEnabled } from './preferences.queries.ts';

export interface AlertRecipient {
  organizationId: string;
  userId: string;
  role: string;
}

/** Whether this user is among the organization's alert recipients at all (an owner or an admin). */
export function receivesAlerts(user: AlertRecipient): boolean {
  return isOwnerOrAdmin(user.role);
}

/** Their alert e-mails there: on unless they turned them off. */
export function alertPreference(pool: Pool, user: AlertRecipient): Promise<boolean> {
  return withOrg(pool, user.organizationId, (db) => alertsEnabled(db, user.userId));
}

/** Turns them on or off; false (nothing changed) for a member, who gets no alerts. */
export async function setAlertPreference(pool: Pool, user: AlertRecipient, enabled: boolean): Promise<boolean> {
  if (!receivesAlerts(user)) return false;
  await withOrg(pool, user.organizationId, (db) => setAlertsEnabled(db, user.userId, enabled));
  return true;
}
