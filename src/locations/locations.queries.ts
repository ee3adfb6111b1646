// SQL for locations. Every function runs on a client inside withOrg: row-level
// security limits each statement to the organization of the transaction, and
// new rows take that organization from app_current_org().
import type { ActiveSession } from '../auth/sessions.queries.ts';
import { lockSql } from '../db/advisory-locks.ts';
import { patchAssignments } from '../db/patch.queries.ts';
import type { Queryable } from '../db/pool.ts';
import { LOCATION_FIELDS, type Location } from './locations.schemas.ts';

export interface LocationFields {
  name: string;
  address_line1: string;
  address_line2: string | null;
  city: string;
  state: string;
  postal_code: string;
  country: string;
  latitude: number | null;
  longitude: number | null;
  is_primary: boolean;
}

/** The columns an update may set; the keys of a patch are checked against this list. */
const UPDATABLE: readonly (keyof LocationFields)[] = LOCATION_FIELDS;

const COLUMNS = `id, organization_id, name, address_line1, address_line2, city, state, postal_code, country,
  latitude, longitude, is_primary, created_at, updated_at`;

interface LocationRow extends Omit<Location, 'created_at' | 'updated_at'> {
  created_at: Date;
  updated_at: Date;
}

function toLocation(row: LocationRow): Location {
  return { ...row, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString() };
}

/** Primary first, then by name (case-insensitive), ties broken stably. */
export async function listLocations(db: Queryable): Promise<Location[]> {
  const { rows } = await db.query<LocationRow>(
    `SELECT ${COLUMNS} FROM locations ORDER BY is_primary DESC, lower(name), name, created_at, id`,
  );
  return rows.map(toLocation);
}

export async function findLocation(db: Queryable, id: string): Promise<Location | undefined> {
  const { rows } = await db.query<LocationRow>(`SELECT ${COLUMNS} FROM locations WHERE id = $1`, [id]);
  return rows[0] && toLocation(rows[0]);
}

export async function insertLocation(db: Queryable, fields: LocationFields): Promise<Location> {
  const { rows } = await db.query<LocationRow>(
    `INSERT INTO locations (organization_id, name, address_line1, address_line2, city, state, postal_code, country,
                            latitude, longitude, is_primary)
     VALUES (app_current_org(), $1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     RETURNING ${COLUMNS}`,
    [
      fields.name,
      fields.address_line1,
      fields.address_line2,
      fields.city,
      fields.state,
      fields.postal_code,
      fields.country,
      fields.latitude,
      fields.longitude,
      fields.is_primary,
    ],
  );
  return toLocation(rows[0]!);
}

/** Sets only the columns present in the patch; an empty patch reads the row unchanged. */
export async function updateLocation(db: Queryable, id: string, patch: Partial<LocationFields>): Promise<Location | undefined> {
  const set = patchAssignments(UPDATABLE, patch);
  if (!set) return findLocation(db, id);
  const { rows } = await db.query<LocationRow>(`UPDATE locations SET ${set.assignments} WHERE id = $1 RETURNING ${COLUMNS}`, [
    id,
    ...set.values,
  ]);
  return rows[0] && toLocation(rows[0]);
}

/** Unmarks the current primary, if it is another location than keepId. */
export async function clearPrimary(db: Queryable, keepId: string | null): Promise<void> {
  await db.query('UPDATE locations SET is_primary = false WHERE is_primary AND id IS DISTINCT FROM $1', [keepId]);
}

/**
 * Serialises the changes of one organization's primary location. Taken first
 * in every transaction that marks a primary, so those transactions queue in
 * the same order and each one, once it holds the lock, sees (and clears) the
 * primary the previous one committed.
 */
export async function lockPrimary(db: Queryable): Promise<void> {
  await db.query(`SELECT ${lockSql('primary_location', 'app_current_org()')}`);
}

export async function deleteLocation(db: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM locations WHERE id = $1', [id]);
  return (rowCount ?? 0) > 0;
}

/**
 * GET /locations in one statement (app_locations_for_session): the
 * x-user-token's session, as findActiveSession reads it, and the
 * JSON array of its organization's locations, read as switchboard_app in
 * that organization. Undefined: no active session. Runs on the pool, outside
 * any transaction.
 */
export async function readLocationsForSession(db: Queryable, tokenHash: Buffer): Promise<(ActiveSession & { body: string }) | undefined> {
  const { rows } = await db.query<ActiveSession & { body: string }>({
    name: 'locations_for_session',
    text: 'SELECT * FROM app_locations_for_session($1)',
    values: [tokenHash],
  });
  return rows[0];
}
