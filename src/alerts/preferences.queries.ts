// Who gets an organization's alerts: its active owners and admins, less those
// who turned alerts off for themselves there (alert_preferences; no row: on).
import { OWNER_OR_ADMIN_SQL } from '../organizations/roles.ts';
import type { Queryable } from '../db/pool.ts';

/** Inside the organization (withOrg): whether the user gets its alerts (no row: yes). */
export async function alertsEnabled(db: Queryable, userId: string): Promise<boolean> {
  const { rows } = await db.query<{ enabled: boolean }>(
    `SELECT enabled FROM alert_preferences WHERE organization_id = app_current_org() AND user_id = $1`,
    [userId],
  );
  return rows[0]?.enabled ?? true;
}

/** Inside the organization (withOrg): turns the user's alerts on or off there. */
export async function setAlertsEnabled(db: Queryable, userId: string, enabled: boolean): Promise<void> {
  await db.query(
    `INSERT INTO alert_preferences (organization_id, user_id, enabled) VALUES (app_current_org(), $1, $2)
     ON CONFLICT (organization_id, user_id) DO UPDATE SET enabled = EXCLUDED.enabled, updated_at = now()`,
    [userId, enabled],
  );
}

/** The organization's name and the addresses its alerts go to now (owner pool: the command line). */
export async function alertRecipients(
  db: Queryable,
  organizationId: string,
): Promise<{ name: string; active: boolean; emails: string[] } | undefined> {
  const { rows } = await db.query<{ name: string; active: boolean; emails: string[] }>(
    `SELECT o.name, o.active,
            coalesce(array_agg(u.email ORDER BY u.email) FILTER (WHERE u.id IS NOT NULL), '{}') AS emails
       FROM organizations o
       LEFT JOIN memberships m ON m.organization_id = o.id AND m.role IN (${OWNER_OR_ADMIN_SQL})
       LEFT JOIN users u ON u.id = m.user_id AND u.active
             AND NOT EXISTS (SELECT 1 FROM alert_preferences p
                              WHERE p.organization_id = o.id AND p.user_id = u.id AND NOT p.enabled)
      WHERE o.id = $1
      GROUP BY o.id`,
    [organizationId],
  );
  return rows[0];
}
