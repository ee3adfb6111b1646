// TRUNCATE of a cached table reaches the process caches (docs/security.md,
// "Review findings of the second review", 3): TRUNCATE fires no DELETE
// trigger, so the *_cache_truncate triggers send `flush:<cache>`. Two apps
// on one database stand for two serve processes (test/helpers/cache-processes.ts).
// The TRUNCATE is made in SQL, as in psql: no process evicts anything itself.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hashToken } from '../../src/auth/tokens.ts';
import { createProcessCaches } from '../../src/cache/process-caches.ts';
import type { TaggedCache } from '../../src/cache/tagged-cache.ts';
import { tags, type CacheName } from '../../src/cache/tags.ts';
import { startCacheProcesses, type CacheProcess, type CacheProcesses } from '../helpers/cache-processes.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { createMember } from '../helpers/fixtures.ts';
import { createClient, issueTokens, platformHeaders } from '../helpers/oauth.ts';

describe('TRUNCATE of a cached table empties that cache in every process', () => {
  let rig: CacheProcesses;
  let db: TestDatabase;
  let processes: CacheProcess[];
  before(async () => {
    rig = await startCacheProcesses();
    ({ db, processes } = rig);
  });
  after(() => rig.close());
  const notificationsHandled = () => rig.notificationsHandled();

  async function platform() {
    const member = await createMember(db.pool);
    const client = await createClient(db.pool, { name: 'Cached platform' });
    const tokens = await issueTokens(db.pool, { client, userId: member.user.id, organizationId: member.org.id });
    return { member, client, tokens, headers: platformHeaders(tokens, client) };
  }
  const recent = (p: CacheProcess, headers: Record<string, string>) => p.t.app.inject({ url: '/calls/recent', headers });

  test('TRUNCATE oauth_access_tokens: a token cached in both processes is refused by both at once', async () => {
    const { tokens, headers } = await platform();
    const key = hashToken(tokens.access_token).toString('hex');
    for (const p of processes) {
      assert.equal((await recent(p, headers)).statusCode, 200);
      assert.ok(p.caches.stores.access_tokens.get(key), 'the token is answered from the cache');
    }
    await db.pool.query('TRUNCATE oauth_access_tokens');
    await notificationsHandled();
    for (const p of processes) {
      assert.equal(p.caches.stores.access_tokens.size, 0, 'the whole access-token cache is gone');
      assert.equal((await recent(p, headers)).statusCode, 401);
    }
  });

  test('TRUNCATE user_sessions: an x-user-token cached in both processes is refused by both; other caches stay', async () => {
    const member = await createMember(db.pool);
    const { headers } = await platform();
    for (const p of processes) {
      assert.equal((await p.t.app.inject({ url: '/locations', headers: { 'x-user-token': member.token } })).statusCode, 200);
      assert.equal((await recent(p, headers)).statusCode, 200);
      assert.ok(p.caches.stores.sessions.size > 0 && p.caches.stores.access_tokens.size > 0);
    }
    await db.pool.query('TRUNCATE user_sessions');
    await notificationsHandled();
    for (const p of processes) {
      assert.equal(p.caches.stores.sessions.size, 0);
      assert.equal((await p.t.app.inject({ url: '/locations', headers: { 'x-user-token': member.token } })).statusCode, 401);
      assert.ok(p.caches.stores.access_tokens.size > 0, 'only the sessions were flushed');
    }
  });

  test('TRUNCATE calls: a cached /calls/recent body is read again', async () => {
    const { member, headers } = await platform();
    const created = await processes[0]!.t.app.inject({
      method: 'POST',
      url: '/calls',
      headers: { 'x-user-token': member.token },
      payload: { summary: 'Booked a visit', duration_seconds: 4 },
    });
    assert.equal(created.statusCode, 201);
    for (const p of processes) assert.equal((await recent(p, headers)).json().length, 1);
    await db.pool.query('TRUNCATE calls CASCADE');
    await notificationsHandled();
    for (const p of processes) assert.deepEqual((await recent(p, headers)).json(), []);
  });

  test('TRUNCATE oauth_clients CASCADE: the client and its tokens are refused by both processes', async () => {
    const { client, headers } = await platform();
    const revoke = (p: CacheProcess) =>
      p.t.app.inject({
        method: 'POST',
        url: '/oauth/revoke',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ token: 'unknown', client_id: client.client_id, client_secret: client.client_secret }).toString(),
      });
    for (const p of processes) {
      assert.equal((await recent(p, headers)).statusCode, 200);
      assert.equal((await revoke(p)).statusCode, 200, 'client authentication answered');
      assert.ok(p.caches.stores.clients.get(client.client_id), 'the client is answered from the cache');
    }
    await db.pool.query('TRUNCATE oauth_clients CASCADE');
    await notificationsHandled();
    for (const p of processes) {
      assert.equal((await recent(p, headers)).statusCode, 401);
      assert.equal((await revoke(p)).statusCode, 401);
    }
  });

  test('flush:<cache> empties that cache alone; a cache name this version does not know empties every cache', () => {
    const caches = createProcessCaches({ maxAgeMs: 60_000 });
    try {
      caches.setEnabled(true);
      const { access_tokens, sessions, clients, reads } = caches.stores;
      const all: TaggedCache<unknown>[] = [access_tokens, sessions, clients, reads];
      const fill = () => {
        for (const cache of all) cache.set('k', {}, ['grant:1'], cache.ticket());
      };
      const sizes = () => all.map((cache) => cache.size);
      fill();
      caches.evict([tags.cache('sessions')]);
      assert.deepEqual(sizes(), [1, 0, 1, 1]);
      caches.evict([tags.cache('clients'), tags.cache('reads')]);
      assert.deepEqual(sizes(), [1, 0, 0, 0]);
      fill();
      caches.evict([tags.cache('access_tokens')]);
      assert.deepEqual(sizes(), [0, 1, 1, 1]);
      fill();
      caches.evict([tags.cache('something_new' as CacheName)]);
      assert.deepEqual(sizes(), [0, 0, 0, 0]);
      fill();
      caches.evict([tags.cache('constructor' as CacheName)]);
      assert.deepEqual(sizes(), [0, 0, 0, 0]);
      fill();
      caches.evict([tags.user('2'), tags.cache('sessions'), tags.grant('1')]);
      assert.deepEqual(sizes(), [0, 0, 0, 0], 'entry tags in the same notification still evict');
    } finally {
      caches.setEnabled(false);
    }
  });
});
