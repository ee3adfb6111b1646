// TRUNCATE of a cached table reaches the process caches (docs/security.md,
// "Review findings of the second review", 3): TRUNCATE fires no DELETE
// trigger, so migration 0024's AFTER TRUNCATE triggers send `flush:<cache>`.
// Two apps on one database stand for two serve processes, each with its own
// caches kept true by its own LISTEN connection (src/cache/cache-listener.ts),
// as `serve` runs them. The TRUNCATE is made in SQL, as in psql: no process
// evicts anything itself. Entries live 60 s here, so only the notification can
// end them within the test.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { hashToken } from '../../src/auth/tokens.ts';
import { CACHE_CHANNEL, listenForInvalidations, type CacheListener } from '../../src/cache/cache-listener.ts';
import type { CacheSlot } from '../../src/cache/caches.ts';
import { createProcessCaches, type ProcessCaches } from '../../src/cache/process-caches.ts';
import type { TaggedCache } from '../../src/cache/tagged-cache.ts';
import { tags, type CacheName } from '../../src/cache/tags.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createMember } from '../helpers/fixtures.ts';
import { createClient, issueTokens, platformHeaders } from '../helpers/oauth.ts';

interface Process {
  t: TestApp;
  caches: ProcessCaches;
  listener: CacheListener;
}

describe('TRUNCATE of a cached table empties that cache in every process', () => {
  let db: TestDatabase;
  let processes: Process[];

  before(async () => {
    db = await createTestDatabase();
    processes = [];
    for (let i = 0; i < 2; i++) {
      const caches = createProcessCaches({ maxAgeMs: 60_000 });
      const listener = await listenForInvalidations(db.url, caches, pino({ level: 'silent' }));
      const t = await startTestApp({ db, caches });
      processes.push({ t, caches, listener });
    }
    for (const p of processes) assert.ok(p.listener.connected && p.caches.enabled, 'the caches are on');
  });
  after(async () => {
    for (const p of processes) {
      await p.t.close();
      await p.listener.close();
    }
    await db.drop();
  });

  /**
   * Returns once every process has handled every notification committed
   * before this call: a probe entry tagged with a fresh tag is stored in each
   * process, the tag is sent after them, and PostgreSQL delivers notifications
   * in commit order, so a process that dropped its probe has handled the earlier ones.
   */
  const PROBE: CacheSlot<string> = { cache: 'reads' };
  async function notificationsHandled(): Promise<void> {
    const tag = tags.calls(randomUUID());
    for (const p of processes) p.caches.set(PROBE, tag, 'probe', [tag], p.caches.ticket());
    await db.pool.query('SELECT pg_notify($1, $2)', [CACHE_CHANNEL, tag]);
    const deadline = Date.now() + 10_000;
    while (processes.some((p) => p.caches.get(PROBE, tag) !== undefined)) {
      assert.ok(Date.now() < deadline, 'the probe notification never arrived');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  async function platform() {
    const member = await createMember(db.pool);
    const client = await createClient(db.pool, { name: 'Cached platform' });
    const tokens = await issueTokens(db.pool, { client, userId: member.user.id, organizationId: member.org.id });
    return { member, client, tokens, headers: platformHeaders(tokens, client) };
  }
  const recent = (p: Process, headers: Record<string, string>) => p.t.app.inject({ url: '/calls/recent', headers });

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
    const revoke = (p: Process) =>
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
