// The caches of one serve process, and the one way entries leave them early:
// evict(tags), called by the LISTEN connection for every notification
// (cache-listener.ts, sent by the *_cache_* triggers) and by this process right after it
// commits a change of its own. Besides the tags entries carry, a
// notification may hold `flush` (everything) or `flush:<cache>` (one whole
// cache: sent on TRUNCATE, which names no rows, by app_cache_truncated).
import type { Caches, CacheSlot, Ticket } from './caches.ts';
import { GenerationClock, TaggedCache } from './tagged-cache.ts';
import { CACHE_NAMES, flushedCache, tags as tagOf, type CacheName, type Tag } from './tags.ts';

export interface ProcessCaches extends Caches {
  /** Each cache by name, to look inside (its size, its entries). */
  readonly stores: Readonly<Record<CacheName, TaggedCache<unknown>>>;
  /** On while the LISTEN connection is up (cache-listener.ts); off, every lookup misses. */
  readonly enabled: boolean;
  flush(): void;
  setEnabled(enabled: boolean): void;
}

/** Entries per cache: a /calls/recent body is at most 100 calls, so 500 reads stay within a few tens of MiB. */
const MAX_ENTRIES: Record<CacheName, number> = { access_tokens: 10_000, sessions: 10_000, clients: 1_000, reads: 500 };

export function createProcessCaches(options: { maxAgeMs: number }): ProcessCaches {
  const clock = new GenerationClock();
  const stores = Object.fromEntries(
    CACHE_NAMES.map((name) => [name, new TaggedCache<unknown>({ maxEntries: MAX_ENTRIES[name], maxAgeMs: options.maxAgeMs, clock })]),
  ) as Record<CacheName, TaggedCache<unknown>>;
  const each = Object.values(stores);
  const caches: ProcessCaches = {
    stores,
    get enabled() {
      return stores.reads.isEnabled;
    },
    get<V>(slot: CacheSlot<V>, key: string): V | undefined {
      const value = stores[slot.cache].get(key) as V | undefined;
      return value === undefined || !slot.usable || slot.usable(value) ? value : undefined;
    },
    ticket: () => clock.value as Ticket,
    set(slot, key, value, entryTags, ticket) {
      stores[slot.cache].set(key, value, entryTags, ticket);
    },
    evict(evicted: readonly Tag[]) {
      if (evicted.includes(tagOf.everything)) return caches.flush();
      const entryTags: Tag[] = [];
      for (const tag of evicted) {
        const name = flushedCache(tag);
        if (name === undefined) {
          entryTags.push(tag);
          continue;
        }
        // A cache this version does not know (a newer migration's): everything, to be safe.
        if (!(CACHE_NAMES as readonly string[]).includes(name)) return caches.flush();
        stores[name as CacheName].flush();
      }
      if (entryTags.length > 0) for (const cache of each) cache.evict(entryTags);
    },
    flush() {
      for (const cache of each) cache.flush();
    },
    setEnabled(enabled) {
      for (const cache of each) cache.setEnabled(enabled);
    },
  };
  return caches;
}
