// Rules for service areas: per organization under row-level security; a link
// to a location must stay inside the organization (the composite foreign key
// enforces it, the violation becomes a 400 naming location_id).
import * as errors from '../errors.ts';
import type { Pool } from '../db/pool.ts';
import { withOrg } from '../db/with-org.ts';
import { mapConstraintError } from '../locations/constraint-errors.ts';
import {
  deleteServiceArea as deleteServiceAreaRow,
  findServiceArea,
  insertServiceArea,
  listServiceAreas as listServiceAreaRows,
  updateServiceArea as updateServiceAreaRow,
  type ServiceAreaFields,
} from './service-areas.queries.ts';
import type { ServiceArea, ServiceAreaCreateBody, ServiceAreaPatchBody } from './service-areas.schemas.ts';

export function listServiceAreas(pool: Pool, organizationId: string): Promise<ServiceArea[]> {
  return withOrg(pool, organizationId, (db) => listServiceAreaRows(db));
}

export async function getServiceArea(pool: Pool, organizationId: string, id: string): Promise<ServiceArea> {
  const area = await withOrg(pool, organizationId, (db) => findServiceArea(db, id));
  if (!area) throw new errors.SERVICE_AREA_NOT_FOUND(id);
  return area;
}

export async function createServiceArea(pool: Pool, organizationId: string, body: ServiceAreaCreateBody): Promise<ServiceArea> {
  const fields: ServiceAreaFields = {
    label: body.label.trim(),
    area_type: body.area_type ?? null,
    value: body.value ?? null,
    country: body.country ?? null,
    radius_km: body.radius_km ?? null,
    location_id: body.location_id ?? null,
  };
  try {
    return await withOrg(pool, organizationId, (db) => insertServiceArea(db, fields));
  } catch (error) {
    mapConstraintError(error);
  }
}

/** Partial update: absent fields keep their value, null clears a nullable one. */
export async function updateServiceArea(pool: Pool, organizationId: string, id: string, body: ServiceAreaPatchBody): Promise<ServiceArea> {
  const patch: Partial<ServiceAreaFields> = { ...body, ...(body.label !== undefined ? { label: body.label.trim() } : {}) };
  let area: ServiceArea | undefined;
  try {
    area = await withOrg(pool, organizationId, (db) => updateServiceAreaRow(db, id, patch));
  } catch (error) {
    mapConstraintError(error);
  }
  if (!area) throw new errors.SERVICE_AREA_NOT_FOUND(id);
  return area;
}

export async function deleteServiceArea(pool: Pool, organizationId: string, id: string): Promise<void> {
  const deleted = await withOrg(pool, organizationId, (db) => deleteServiceAreaRow(db, id));
  if (!deleted) throw new errors.SERVICE_AREA_NOT_FOUND(id);
}
