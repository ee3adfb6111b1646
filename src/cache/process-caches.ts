// The caches of one serve process, and the one way entries leave them early:
// evict(tags), called by the LISTEN connection for every notification
// (migration 0012) and, synchronously, by this process right after it
// commits a change of its own (evictLocally), so its next request never
// waits for its own notification. Besides the tags entries carry, a
// notification may hold `flush` (everything) or `flush:<cache>` (one whole
// cache, FLUSH_TARGETS: sent on TRUNCATE, which names no rows, migration 0024).
import type { ActiveSession } from '../auth/sessions.queries.ts';
import type { OAuthClientWithSecret } from '../oauth/clients.queries.ts';
import type { ActiveAccessToken } from '../oauth/tokens.queries.ts';
import { TaggedCache } from './tagged-cache.ts';

export interface ProcessCaches {
  /** SHA-256 (hex) of an access token → what it stands for, the client's secret hash included. */
  accessTokens: TaggedCache<ActiveAccessToken>;
  /** SHA-256 (hex) of an x-user-token → its session. */
  sessions: TaggedCache<ActiveSession>;
  /** client_id → the client, for client authentication at /oauth/token and /oauth/revoke. */
  clients: TaggedCache<OAuthClientWithSecret>;
  /** JSON bodies of the hot reads: "recent:<org>:<limit>", "locations:<org>". */
  reads: TaggedCache<string>;
  /** On while the LISTEN connection is up (cache-listener.ts); off, every lookup goes to PostgreSQL. */
  readonly enabled: boolean;
  evict(tags: readonly string[]): void;
  flush(): void;
  setEnabled(enabled: boolean): void;
  close(): void;
}

const live = new Set<ProcessCaches>();

/** The cache a `flush:<name>` tag empties. */
const FLUSH_TARGETS = {
  access_tokens: 'accessTokens',
  sessions: 'sessions',
  clients: 'clients',
  reads: 'reads',
} as const;
const FLUSH_PREFIX = 'flush:';

export function createProcessCaches(options: { maxAgeMs: number }): ProcessCaches {
  const credentials = { maxEntries: 10_000, maxAgeMs: options.maxAgeMs };
  const all = {
    accessTokens: new TaggedCache<ActiveAccessToken>(credentials),
    sessions: new TaggedCache<ActiveSession>(credentials),
    clients: new TaggedCache<OAuthClientWithSecret>({ maxEntries: 1_000, maxAgeMs: options.maxAgeMs }),
    // A /calls/recent body is at most 100 calls: 500 of them stay within a few tens of MiB.
    reads: new TaggedCache<string>({ maxEntries: 500, maxAgeMs: options.maxAgeMs }),
  };
  const each = Object.values(all);
  const caches: ProcessCaches = {
    ...all,
    get enabled() {
      return all.reads.isEnabled;
    },
    evict(tags) {
      if (tags.includes('flush')) return caches.flush();
      const entryTags: string[] = [];
      for (const tag of tags) {
        if (!tag.startsWith(FLUSH_PREFIX)) {
          entryTags.push(tag);
          continue;
        }
        const name = tag.slice(FLUSH_PREFIX.length);
        // A cache this version does not know (a newer migration's): everything, to be safe.
        if (!Object.hasOwn(FLUSH_TARGETS, name)) return caches.flush();
        all[FLUSH_TARGETS[name as keyof typeof FLUSH_TARGETS]].flush();
      }
      if (entryTags.length > 0) for (const cache of each) cache.evict(entryTags);
    },
    flush() {
      for (const cache of each) cache.flush();
    },
    setEnabled(enabled) {
      for (const cache of each) cache.setEnabled(enabled);
    },
    close() {
      caches.setEnabled(false);
      live.delete(caches);
    },
  };
  live.add(caches);
  return caches;
}

/**
 * A change this process has just committed: every cache in the process drops
 * what it concerns now, before the request that made it is answered (the
 * notification from PostgreSQL follows and reaches every other process).
 */
export function evictLocally(tags: readonly string[]): void {
  for (const caches of live) caches.evict(tags);
}

/** The tags of an access token's principal: any of them changing ends it. */
export function accessTokenTags(active: Pick<ActiveAccessToken, 'grant_id' | 'user_id' | 'organization_id' | 'client_id'>): string[] {
  return [`grant:${active.grant_id}`, `user:${active.user_id}`, `org:${active.organization_id}`, `client:${active.client_id}`];
}

export function sessionTags(session: Pick<ActiveSession, 'session_id' | 'user_id' | 'organization_id'>): string[] {
  return [`session:${session.session_id}`, `user:${session.user_id}`, `org:${session.organization_id}`];
}
