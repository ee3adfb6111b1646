// The JSON bodies of the two hot reads, per organization. A body is only ever
// what the row-level-security-bound read answered inside that organization
// (app_org_recent_calls / app_org_locations, run as switchboard_app with
// app.organization_id set), stored under that organization's id, and looked
// up with the organization of a principal verified on this request: the
// cache memoises a read, it never decides which rows a tenant may see.
import type { Queryable } from '../db/pool.ts';
import { readRecentCallsOfOrganization } from '../calls/calls.queries.ts';
import { readLocationsOfOrganization } from '../locations/locations.queries.ts';
import type { ProcessCaches } from './process-caches.ts';

export async function recentCallsBody(caches: ProcessCaches, db: Queryable, organizationId: string, limit: number): Promise<string> {
  const key = `recent:${organizationId}:${limit}`;
  const hit = caches.reads.get(key);
  if (hit !== undefined) return hit;
  const ticket = caches.reads.ticket();
  const body = await readRecentCallsOfOrganization(db, organizationId, limit);
  caches.reads.set(key, body, [`calls:${organizationId}`, `org:${organizationId}`], ticket);
  return body;
}

export async function locationsBody(caches: ProcessCaches, db: Queryable, organizationId: string): Promise<string> {
  const key = `locations:${organizationId}`;
  const hit = caches.reads.get(key);
  if (hit !== undefined) return hit;
  const ticket = caches.reads.ticket();
  const body = await readLocationsOfOrganization(db, organizationId);
  caches.reads.set(key, body, [`locations:${organizationId}`, `org:${organizationId}`], ticket);
  return body;
}
