// The rules of the in-process cache (src/cache/tagged-cache.ts) that keep it
// from answering with what PostgreSQL no longer says.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TaggedCache } from '../../src/cache/tagged-cache.ts';

function cache(options: { maxEntries?: number; maxAgeMs?: number } = {}) {
  const c = new TaggedCache<string>({ maxEntries: options.maxEntries ?? 100, maxAgeMs: options.maxAgeMs ?? 60_000 });
  c.setEnabled(true);
  return c;
}

describe('tagged cache', () => {
  test('serves what was stored, and nothing once one of its tags is evicted', () => {
    const c = cache();
    c.set('token-1', 'principal', ['grant:1', 'user:1'], c.ticket());
    c.set('token-2', 'other', ['grant:2', 'user:1'], c.ticket());
    assert.equal(c.get('token-1'), 'principal');
    c.evict(['grant:1']);
    assert.equal(c.get('token-1'), undefined);
    assert.equal(c.get('token-2'), 'other');
    c.evict(['user:1']);
    assert.equal(c.get('token-2'), undefined);
  });

  test('a read that started before an eviction cannot store what it saw', () => {
    const c = cache();
    const before = c.ticket();
    c.evict(['grant:1']);
    c.set('token-1', 'stale principal', ['grant:1'], before);
    assert.equal(c.get('token-1'), undefined);
    // Another tag's eviction does not hold back an unrelated fill.
    c.set('token-2', 'fresh', ['grant:2'], before);
    assert.equal(c.get('token-2'), 'fresh');
    // A read started after the eviction stores normally.
    c.set('token-1', 'principal', ['grant:1'], c.ticket());
    assert.equal(c.get('token-1'), 'principal');
  });

  test('a flush drops everything and every fill begun before it', () => {
    const c = cache();
    c.set('a', '1', ['x'], c.ticket());
    const before = c.ticket();
    c.flush();
    assert.equal(c.get('a'), undefined);
    c.set('b', '2', ['y'], before);
    assert.equal(c.get('b'), undefined);
  });

  test('off: answers nothing and stores nothing; turned on again it starts empty', () => {
    const c = cache();
    c.set('a', '1', ['x'], c.ticket());
    const during = c.ticket();
    c.setEnabled(false);
    assert.equal(c.get('a'), undefined);
    c.set('a', '2', ['x'], c.ticket());
    c.setEnabled(true);
    assert.equal(c.get('a'), undefined);
    c.set('a', '3', ['x'], during);
    assert.equal(c.get('a'), undefined, 'a fill begun before the cache went off is dropped');
  });

  test('entries older than the maximum age are not served', async () => {
    const c = cache({ maxAgeMs: 20 });
    c.set('a', '1', ['x'], c.ticket());
    assert.equal(c.get('a'), '1');
    await new Promise((resolve) => setTimeout(resolve, 40));
    assert.equal(c.get('a'), undefined);
  });

  test('bounded: the least recently used entry leaves first', () => {
    const c = cache({ maxEntries: 2 });
    c.set('a', '1', ['x'], c.ticket());
    c.set('b', '2', ['x'], c.ticket());
    assert.equal(c.get('a'), '1');
    c.set('c', '3', ['x'], c.ticket());
    assert.equal(c.get('b'), undefined);
    assert.deepEqual([c.get('a'), c.get('c'), c.size], ['1', '3', 2]);
  });
});
