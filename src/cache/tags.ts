// The vocabulary of the switchboard_cache channel: what a cache entry is
// tagged with, and what the *_cache_* triggers (app_cache_truncated on
// TRUNCATE) send when a row changes. One builder per kind of tag, used by every entry
// and every local eviction; test/cache/tags.test.ts fires each trigger and
// checks that it sends exactly what the builder makes.

declare const TAG: unique symbol;
/** A tag as the channel carries it ("grant:<uuid>"); made only by the builders below. */
export type Tag = string & { readonly [TAG]: true };

/** The caches of a process, by the names `flush:<name>` uses. */
export const CACHE_NAMES = ['access_tokens', 'sessions', 'clients', 'reads'] as const;
export type CacheName = (typeof CACHE_NAMES)[number];

const tag = (kind: string, id: string) => `${kind}:${id}` as Tag;
const FLUSH_PREFIX = 'flush:';

export const tags = {
  /** An OAuth grant: every access token issued under it. */
  grant: (grantId: string) => tag('grant', grantId),
  /** A user: every credential of theirs (users and memberships rows). */
  user: (userId: string) => tag('user', userId),
  /** An organization: every credential acting in it, and its reads. */
  org: (organizationId: string) => tag('org', organizationId),
  /** A registered client, by client_id: the client and every access token issued to it. */
  client: (clientId: string) => tag('client', clientId),
  /** An x-user-token session. */
  session: (sessionId: string) => tag('session', sessionId),
  /** An organization's completed calls (GET /calls/recent). */
  calls: (organizationId: string) => tag('calls', organizationId),
  /** An organization's locations (GET /locations). */
  locations: (organizationId: string) => tag('locations', organizationId),
  /** One whole cache (a TRUNCATE names no rows). */
  cache: (name: CacheName) => `${FLUSH_PREFIX}${name}` as Tag,
  /** Everything: a statement touched more than a notification can list. */
  everything: 'flush' as Tag,
} as const;

/** The tags of one notification (comma-separated; none at all means everything). */
export function notificationTags(payload: string | undefined): Tag[] {
  return (payload ?? tags.everything).split(',') as Tag[];
}

/** The cache a tags.cache() tag names (perhaps one this version does not know), or undefined for any other tag. */
export function flushedCache(tag: Tag): string | undefined {
  return tag.startsWith(FLUSH_PREFIX) ? tag.slice(FLUSH_PREFIX.length) : undefined;
}
