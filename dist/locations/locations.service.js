// Rules for locations: the organization comes from the caller's session, all
// work runs under row-level security (withOrg), and at most one location per
// organization is primary. Another organization's location is indistinguishable
// from a missing one (404).
import { hashToken } from '../auth/tokens.js';
import * as errors from '../errors.js';
import { withOrg } from '../db/with-org.js';
import { mapConstraintError, ONE_PRIMARY_INDEX, violatedConstraint } from './constraint-errors.js';
import { clearPrimary, deleteLocation as deleteLocationRow, findLocation, insertLocation, listLocations as listLocationRows, readLocationsForSession, lockPrimary, updateLocation as updateLocationRow, } from './locations.queries.js';
/**
 * Marking a primary takes a per-organization lock first, so concurrent
 * requests queue and never collide on the unique index. Should a writer that
 * skips the lock (a manual SQL session) still win the race, the transaction is
 * retried from the start; only after that does the client see a 409.
 */
const PRIMARY_ATTEMPTS = 3;
async function retryOnPrimaryRace(work) {
    for (let attempt = 1;; attempt++) {
        try {
            return await work();
        }
        catch (error) {
            if (violatedConstraint(error) === ONE_PRIMARY_INDEX && attempt < PRIMARY_ATTEMPTS)
                continue;
            mapConstraintError(error);
        }
    }
}
function newLocationFields(body) {
    return {
        name: body.name.trim(),
        address_line1: body.address_line1 ?? '',
        address_line2: body.address_line2 ?? null,
        city: body.city ?? '',
        state: body.state ?? '',
        postal_code: body.postal_code ?? '',
        country: body.country ?? '',
        latitude: body.latitude ?? null,
        longitude: body.longitude ?? null,
        is_primary: body.is_primary ?? false,
    };
}
/**
 * GET /locations: the x-user-token session checked and the locations read in
 * one statement (readLocationsForSession); the body is the JSON text
 * PostgreSQL wrote. An unknown or inactive session is AUTH_TOKEN_INVALID.
 */
export async function locationsForSession(pool, token) {
    const result = await readLocationsForSession(pool, hashToken(token));
    if (result.outcome !== 'ok')
        throw new errors.AUTH_TOKEN_INVALID();
    return { organizationId: result.organization_id, userId: result.user_id, body: result.body };
}
export function listLocations(pool, organizationId) {
    return withOrg(pool, organizationId, (db) => listLocationRows(db));
}
export async function getLocation(pool, organizationId, id) {
    const location = await withOrg(pool, organizationId, (db) => findLocation(db, id));
    if (!location)
        throw new errors.LOCATION_NOT_FOUND(id);
    return location;
}
export function createLocation(pool, organizationId, body) {
    const fields = newLocationFields(body);
    return retryOnPrimaryRace(() => withOrg(pool, organizationId, async (db) => {
        if (fields.is_primary) {
            await lockPrimary(db);
            await clearPrimary(db, null);
        }
        return insertLocation(db, fields);
    }));
}
/** Partial update: absent fields keep their value, null clears a nullable one. */
export function updateLocation(pool, organizationId, id, body) {
    const patch = { ...body, ...(body.name !== undefined ? { name: body.name.trim() } : {}) };
    return retryOnPrimaryRace(() => withOrg(pool, organizationId, async (db) => {
        if (patch.is_primary === true) {
            await lockPrimary(db);
            await clearPrimary(db, id);
        }
        // A missing id throws, which also rolls back the clearing above.
        const location = await updateLocationRow(db, id, patch);
        if (!location)
            throw new errors.LOCATION_NOT_FOUND(id);
        return location;
    }));
}
export function makePrimary(pool, organizationId, id) {
    return updateLocation(pool, organizationId, id, { is_primary: true });
}
/** Service areas linked to the location keep existing, unlinked (ON DELETE SET NULL). */
export async function deleteLocation(pool, organizationId, id) {
    const deleted = await withOrg(pool, organizationId, (db) => deleteLocationRow(db, id));
    if (!deleted)
        throw new errors.LOCATION_NOT_FOUND(id);
}
//# sourceMappingURL=locations.service.js.map