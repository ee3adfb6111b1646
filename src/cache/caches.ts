// What code that reads through a cache, or changes what a cache holds, is
// handed (app.caches): a process's caches kept true by notifications
// (process-caches.ts), or NO_CACHES, which holds nothing, when the process has
// none (CACHE_MAX_AGE=0, the CLI, the worker). Either way the caller's code is
// the same: look up, read on a miss, store, evict after a committed change.
// The values and what they mean belong to the domain that reads them: it
// declares a CacheSlot saying which cache a value lives in and when a held
// one may no longer be served.
import type { CacheName, Tag } from './tags.ts';

/** One kind of cached value, declared by the domain that reads it. */
export interface CacheSlot<V> {
  readonly cache: CacheName;
  /** False for a held value that must not be served any more (an expiry): it is read again. */
  readonly usable?: (value: V) => boolean;
}

/**
 * Taken before the query whose answer may be stored: a store whose tags were
 * evicted after it (the query may have seen the row before the change) is dropped.
 */
export type Ticket = number & { readonly ticket: true };

export interface Caches {
  get<V>(slot: CacheSlot<V>, key: string): V | undefined;
  ticket(): Ticket;
  /** Stores what a query answered, unless one of `tags` was evicted since `ticket` was taken. */
  set<V>(slot: CacheSlot<V>, key: string, value: V, tags: readonly Tag[], ticket: Ticket): void;
  /**
   * A change this process has just committed: entries carrying one of `tags`
   * go now, so its next request does not wait for the notification (which
   * reaches every other process).
   */
  evict(tags: readonly Tag[]): void;
}

/** The caches of a process that has none: every lookup misses, nothing is stored. */
export const NO_CACHES: Caches = {
  get: () => undefined,
  ticket: () => 0 as Ticket,
  set: () => {},
  evict: () => {},
};

/** The value under `key`, or what `load` reads (then stored under `tagsOf(value)`); undefined when `load` finds nothing. */
export async function readThrough<V>(
  caches: Caches,
  slot: CacheSlot<V>,
  key: string,
  load: () => Promise<V | undefined>,
  tagsOf: (value: V) => readonly Tag[],
): Promise<V | undefined> {
  const hit = caches.get(slot, key);
  if (hit !== undefined) return hit;
  const ticket = caches.ticket();
  const value = await load();
  if (value !== undefined) caches.set(slot, key, value, tagsOf(value), ticket);
  return value;
}

/** A body cached per organization ({cache: 'reads'}): its key and the tags that evict it. */
export interface OrganizationBody {
  readonly slot: CacheSlot<string>;
  key(organizationId: string): string;
  tags(organizationId: string): readonly Tag[];
}

/** A principal and its organization's body, as two fields: a cache hit hands out both held values, copying neither. */
export interface PrincipalAndBody<P> {
  principal: P;
  body: string;
}

/**
 * A credential's principal and its organization's body, read together: from
 * the caches when both are there, else by `read` (one statement answering
 * both) and both stored. The cache memoises a read, it never decides which
 * rows a tenant may see: a body is only what the read answered inside the
 * organization it is stored under, and it is looked up with the organization
 * of the principal presented. Undefined when `read` finds no principal.
 */
export async function readPrincipalAndBody<P extends { organization_id: string }>(
  caches: Caches,
  principal: { slot: CacheSlot<P>; key: string; tags: (principal: P) => readonly Tag[] },
  body: OrganizationBody,
  read: () => Promise<(P & { body: string }) | undefined>,
): Promise<PrincipalAndBody<P> | undefined> {
  const held = caches.get(principal.slot, principal.key);
  const heldBody = held && caches.get(body.slot, body.key(held.organization_id));
  if (held && heldBody !== undefined) return { principal: held, body: heldBody };
  const ticket = caches.ticket();
  const answer = await read();
  if (!answer) return undefined;
  const { body: readBody, ...rest } = answer;
  const readPrincipal = rest as unknown as P; // the answer less its body
  caches.set(principal.slot, principal.key, readPrincipal, principal.tags(readPrincipal), ticket);
  caches.set(body.slot, body.key(answer.organization_id), readBody, body.tags(answer.organization_id), ticket);
  return { principal: readPrincipal, body: readBody };
}
