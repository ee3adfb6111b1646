// Rules for locations: the organization comes from the caller's session, all
// work runs under row-level security (withOrg), and at most one location per
// organization is primary. Another organization's location is indistinguishable
// from a missing one (404).
import * as errors from '../errors.ts';
import type { Pool } from '../db/pool.ts';
import { withOrg } from '../db/with-org.ts';
import { readPrincipalAndBody, type Caches, type OrganizationBody } from '../cache/caches.ts';
import { tags } from '../cache/tags.ts';
import { SESSIONS, sessionTags } from '../auth/sessions.service.ts';
import { violatedConstraint } from '../db/pg-errors.ts';
import { mapConstraintError, ONE_PRIMARY_INDEX } from './constraint-errors.ts';
import {
  clearPrimary,
  deleteLocation as deleteLocationRow,
  findLocation,
  insertLocation,
  listLocations as listLocationRows,
  readLocationsForSession,
  lockPrimary,
  updateLocation as updateLocationRow,
  type LocationFields,
} from './locations.queries.ts';
import type { Location, LocationCreateBody, LocationPatchBody } from './locations.schemas.ts';

/**
 * Marking a primary takes a per-organization lock first, so concurrent
 * requests queue and never collide on the unique index. Should a writer that
 * skips the lock (a manual SQL session) still win the race, the transaction is
 * retried from the start; only after that does the client see a 409.
 */
const PRIMARY_ATTEMPTS = 3;

async function retryOnPrimaryRace<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (violatedConstraint(error) === ONE_PRIMARY_INDEX && attempt < PRIMARY_ATTEMPTS) continue;
      mapConstraintError(error);
    }
  }
}

function newLocationFields(body: LocationCreateBody): LocationFields {
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

/** GET /locations bodies in the process caches, by organization: what that organization's row-level-security-bound read wrote. */
const LOCATIONS_BODY: OrganizationBody = {
  slot: { cache: 'reads' },
  key: (organizationId) => `locations:${organizationId}`,
  tags: (organizationId) => [tags.locations(organizationId), tags.org(organizationId)],
};

/**
 * GET /locations: the x-user-token's session (by its hash, taken once per request) and its organization's
 * locations (readPrincipalAndBody, over readLocationsForSession); the body
 * is the JSON text PostgreSQL wrote. An unknown or inactive session is
 * AUTH_TOKEN_INVALID.
 */
export async function locationsForSession(
  pool: Pool,
  caches: Caches,
  tokenHash: Buffer,
): Promise<{ organizationId: string; userId: string; body: string }> {
  const principal = { slot: SESSIONS, key: tokenHash.toString('hex'), tags: sessionTags };
  const found = await readPrincipalAndBody(caches, principal, LOCATIONS_BODY, () => readLocationsForSession(pool, tokenHash));
  if (!found) throw new errors.AUTH_TOKEN_INVALID();
  return { organizationId: found.principal.organization_id, userId: found.principal.user_id, body: found.body };
}

export function listLocations(pool: Pool, organizationId: string): Promise<Location[]> {
  return withOrg(pool, organizationId, (db) => listLocationRows(db));
}

export async function getLocation(pool: Pool, organizationId: string, id: string): Promise<Location> {
  const location = await withOrg(pool, organizationId, (db) => findLocation(db, id));
  if (!location) throw new errors.LOCATION_NOT_FOUND(id);
  return location;
}

/** After a write to an organization's locations (committed or not): this process's GET /locations reads again. */
function evictingLocations<T>(caches: Caches, organizationId: string, write: Promise<T>): Promise<T> {
  return write.finally(() => caches.evict([tags.locations(organizationId)]));
}

export function createLocation(pool: Pool, caches: Caches, organizationId: string, body: LocationCreateBody): Promise<Location> {
  const fields = newLocationFields(body);
  return evictingLocations(
    caches,
    organizationId,
    retryOnPrimaryRace(() =>
      withOrg(pool, organizationId, async (db) => {
        if (fields.is_primary) {
          await lockPrimary(db);
          await clearPrimary(db, null);
        }
        return insertLocation(db, fields);
      }),
    ),
  );
}

/** Partial update: absent fields keep their value, null clears a nullable one. */
export function updateLocation(pool: Pool, caches: Caches, organizationId: string, id: string, body: LocationPatchBody): Promise<Location> {
  const patch: Partial<LocationFields> = { ...body, ...(body.name !== undefined ? { name: body.name.trim() } : {}) };
  return evictingLocations(
    caches,
    organizationId,
    retryOnPrimaryRace(() =>
      withOrg(pool, organizationId, async (db) => {
        if (patch.is_primary === true) {
          await lockPrimary(db);
          await clearPrimary(db, id);
        }
        // A missing id throws, which also rolls back the clearing above.
        const location = await updateLocationRow(db, id, patch);
        if (!location) throw new errors.LOCATION_NOT_FOUND(id);
        return location;
      }),
    ),
  );
}

export function makePrimary(pool: Pool, caches: Caches, organizationId: string, id: string): Promise<Location> {
  return updateLocation(pool, caches, organizationId, id, { is_primary: true });
}

/** Service areas linked to the location keep existing, unlinked (ON DELETE SET NULL). */
export async function deleteLocation(pool: Pool, caches: Caches, organizationId: string, id: string): Promise<void> {
  const deleted = await evictingLocations(
    caches,
    organizationId,
    withOrg(pool, organizationId, (db) => deleteLocationRow(db, id)),
  );
  if (!deleted) throw new errors.LOCATION_NOT_FOUND(id);
}
