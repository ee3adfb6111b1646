// An in-process cache whose entries carry tags ("grant:<id>", "calls:<org>")
// so that one notification evicts every entry it concerns. Four rules keep it
// from answering with something PostgreSQL no longer says (docs/decisions.md
// "Credential and read caches"):
//   - off until the LISTEN connection is up, and flushed and off whenever it
//     is lost (cache-listener.ts), flushed again when it is back;
//   - a generation clock: a fill carries the clock read before its query ran,
//     and is dropped if any of its tags (or everything) was evicted since, so
//     a read that raced an invalidation cannot store what it saw before it;
//   - a maximum age per entry, the backstop for a notification that never came;
//   - a bounded size, least recently used first out.
export interface TaggedCacheOptions {
  maxEntries: number;
  maxAgeMs: number;
  /** Shared by the caches of one process, so one ticket stands for a fill of several of them. */
  clock?: GenerationClock;
}

/** Counts evictions and flushes; a ticket is its value when a fill began. */
export class GenerationClock {
  value = 0;
}

interface Entry<V> {
  value: V;
  tags: readonly string[];
  storedAt: number;
}

/** Past this many remembered evictions the memory is reset (and in-flight fills dropped, as after a flush). */
const MAX_REMEMBERED_EVICTIONS = 10_000;

export class TaggedCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly keysByTag = new Map<string, Set<string>>();
  /** Tag → clock value of its last eviction. */
  private readonly evictedAt = new Map<string, number>();
  private readonly clock: GenerationClock;
  private flushedAt = 0;
  private enabled = false;

  private readonly options: TaggedCacheOptions;
  constructor(options: TaggedCacheOptions) {
    this.options = options;
    this.clock = options.clock ?? new GenerationClock();
  }

  get isEnabled(): boolean {
    return this.enabled;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Read before the query whose answer may be stored: set() compares it with later evictions. */
  ticket(): number {
    return this.clock.value;
  }

  get(key: string): V | undefined {
    if (!this.enabled) return undefined;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (performance.now() - entry.storedAt > this.options.maxAgeMs) {
      this.remove(key, entry);
      return undefined;
    }
    // Least recently used first out: a hit moves the entry to the end.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Stores what a query answered, unless the cache is off or one of `tags` was evicted after `ticket` was taken. */
  set(key: string, value: V, tags: readonly string[], ticket: number): void {
    if (!this.enabled || this.flushedAt > ticket) return;
    for (const tag of tags) {
      if ((this.evictedAt.get(tag) ?? -1) > ticket) return;
    }
    const previous = this.entries.get(key);
    if (previous) this.remove(key, previous);
    this.entries.set(key, { value, tags, storedAt: performance.now() });
    for (const tag of tags) {
      const keys = this.keysByTag.get(tag) ?? new Set<string>();
      if (keys.size === 0) this.keysByTag.set(tag, keys);
      keys.add(key);
    }
    if (this.entries.size > this.options.maxEntries) {
      const [oldestKey, oldest] = this.entries.entries().next().value!;
      this.remove(oldestKey, oldest);
    }
  }

  evict(tags: readonly string[]): void {
    const now = ++this.clock.value;
    if (this.evictedAt.size + tags.length > MAX_REMEMBERED_EVICTIONS) {
      this.evictedAt.clear();
      this.flushedAt = now;
    }
    for (const tag of tags) {
      this.evictedAt.set(tag, now);
      const keys = this.keysByTag.get(tag);
      if (!keys) continue;
      for (const key of [...keys]) {
        const entry = this.entries.get(key);
        if (entry) this.remove(key, entry);
      }
    }
  }

  flush(): void {
    this.flushedAt = ++this.clock.value;
    this.evictedAt.clear();
    this.entries.clear();
    this.keysByTag.clear();
  }

  /** On: serve and fill. Off: answer nothing and store nothing. Either way everything held is dropped. */
  setEnabled(enabled: boolean): void {
    this.flush();
    this.enabled = enabled;
  }

  private remove(key: string, entry: Entry<V>): void {
    this.entries.delete(key);
    for (const tag of entry.tags) {
      const keys = this.keysByTag.get(tag);
      if (!keys) continue;
      keys.delete(key);
      if (keys.size === 0) this.keysByTag.delete(tag);
    }
  }
}
