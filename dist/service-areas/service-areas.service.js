// Rules for service areas: per organization under row-level security; a link
// to a location must stay inside the organization (the composite foreign key
// enforces it, the violation becomes a 400 naming location_id).
import * as errors from '../errors.js';
import { withOrg } from '../db/with-org.js';
import { mapConstraintError } from '../locations/constraint-errors.js';
import { deleteServiceArea as deleteServiceAreaRow, findServiceArea, insertServiceArea, listServiceAreas as listServiceAreaRows, updateServiceArea as updateServiceAreaRow, } from './service-areas.queries.js';
export function listServiceAreas(pool, organizationId) {
    return withOrg(pool, organizationId, (db) => listServiceAreaRows(db));
}
export async function getServiceArea(pool, organizationId, id) {
    const area = await withOrg(pool, organizationId, (db) => findServiceArea(db, id));
    if (!area)
        throw new errors.SERVICE_AREA_NOT_FOUND(id);
    return area;
}
export async function createServiceArea(pool, organizationId, body) {
    const fields = {
        label: body.label.trim(),
        area_type: body.area_type ?? null,
        value: body.value ?? null,
        country: body.country ?? null,
        radius_km: body.radius_km ?? null,
        location_id: body.location_id ?? null,
    };
    try {
        return await withOrg(pool, organizationId, (db) => insertServiceArea(db, fields));
    }
    catch (error) {
        mapConstraintError(error);
    }
}
/** Partial update: absent fields keep their value, null clears a nullable one. */
export async function updateServiceArea(pool, organizationId, id, body) {
    const patch = { ...body, ...(body.label !== undefined ? { label: body.label.trim() } : {}) };
    let area;
    try {
        area = await withOrg(pool, organizationId, (db) => updateServiceAreaRow(db, id, patch));
    }
    catch (error) {
        mapConstraintError(error);
    }
    if (!area)
        throw new errors.SERVICE_AREA_NOT_FOUND(id);
    return area;
}
export async function deleteServiceArea(pool, organizationId, id) {
    const deleted = await withOrg(pool, organizationId, (db) => deleteServiceAreaRow(db, id));
    if (!deleted)
        throw new errors.SERVICE_AREA_NOT_FOUND(id);
}
//# sourceMappingURL=service-areas.service.js.map