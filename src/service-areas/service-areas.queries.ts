// SQL for service areas; run inside withOrg (row-level security), new rows
// take their organization from app_current_org().
import { patchAssignments } from '../db/patch.queries.ts';
import type { Queryable } from '../db/pool.ts';
import { SERVICE_AREA_FIELDS, type ServiceArea } from './service-areas.schemas.ts';

export interface ServiceAreaFields {
  label: string;
  area_type: string | null;
  value: string | null;
  country: string | null;
  radius_km: number | null;
  location_id: string | null;
}

/** The columns an update may set; the keys of a patch are checked against this list. */
const UPDATABLE: readonly (keyof ServiceAreaFields)[] = SERVICE_AREA_FIELDS;

const COLUMNS = 'id, organization_id, label, area_type, value, country, radius_km, location_id, created_at, updated_at';

interface ServiceAreaRow extends Omit<ServiceArea, 'created_at' | 'updated_at'> {
  created_at: Date;
  updated_at: Date;
}

function toServiceArea(row: ServiceAreaRow): ServiceArea {
  return { ...row, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString() };
}

/** By label (case-insensitive), ties broken stably. */
export async function listServiceAreas(db: Queryable): Promise<ServiceArea[]> {
  const { rows } = await db.query<ServiceAreaRow>(`SELECT ${COLUMNS} FROM service_areas ORDER BY lower(label), label, created_at, id`);
  return rows.map(toServiceArea);
}

export async function findServiceArea(db: Queryable, id: string): Promise<ServiceArea | undefined> {
  const { rows } = await db.query<ServiceAreaRow>(`SELECT ${COLUMNS} FROM service_areas WHERE id = $1`, [id]);
  return rows[0] && toServiceArea(rows[0]);
}

export async function insertServiceArea(db: Queryable, fields: ServiceAreaFields): Promise<ServiceArea> {
  const { rows } = await db.query<ServiceAreaRow>(
    `INSERT INTO service_areas (organization_id, label, area_type, value, country, radius_km, location_id)
     VALUES (app_current_org(), $1, $2, $3, $4, $5, $6)
     RETURNING ${COLUMNS}`,
    [fields.label, fields.area_type, fields.value, fields.country, fields.radius_km, fields.location_id],
  );
  return toServiceArea(rows[0]!);
}

/** Sets only the columns present in the patch; an empty patch reads the row unchanged. */
export async function updateServiceArea(db: Queryable, id: string, patch: Partial<ServiceAreaFields>): Promise<ServiceArea | undefined> {
  const set = patchAssignments(UPDATABLE, patch);
  if (!set) return findServiceArea(db, id);
  const { rows } = await db.query<ServiceAreaRow>(`UPDATE service_areas SET ${set.assignments} WHERE id = $1 RETURNING ${COLUMNS}`, [
    id,
    ...set.values,
  ]);
  return rows[0] && toServiceArea(rows[0]);
}

export async function deleteServiceArea(db: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM service_areas WHERE id = $1', [id]);
  return (rowCount ?? 0) > 0;
}
