// Each cached table's TRUNCATE trigger on its own (docs/decisions.md,
// "Credential and read caches"; docs/security.md, finding 3 of the second
// review): two apps on one database stand for two serve processes, each with
// its caches kept true by its own LISTEN connection. A TRUNCATE … CASCADE
// also truncates the tables that reference the one named, whose own triggers
// would flush the same caches; here every other *_cache_truncate trigger is
// off for that statement, so only the trigger of the table named can have
// emptied the caches. Entries live 60 s: only a notification ends them in time.
// And the catalogue check: every cached table has its update, delete and
// truncate triggers, and no other table has cache triggers.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { CacheName } from '../../src/cache/tags.ts';
import { startCacheProcesses, type CacheProcess, type CacheProcesses } from '../helpers/cache-processes.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { createMember } from '../helpers/fixtures.ts';
import { createClient, issueTokens, platformHeaders } from '../helpers/oauth.ts';

/**
 * The tables a cached entry rests on (docs/decisions.md, "Credential and read
 * caches": tokens, grants, clients, users, memberships, organizations,
 * sessions; calls and locations), and the caches a TRUNCATE of each empties.
 * src/cache knows no domain, so no module of the service lists them.
 */
const CACHED_TABLES: Record<string, CacheName[]> = {
  oauth_access_tokens: ['access_tokens'],
  oauth_grants: ['access_tokens'],
  oauth_clients: ['clients', 'access_tokens'],
  users: ['access_tokens', 'sessions'],
  memberships: ['access_tokens', 'sessions'],
  organizations: ['access_tokens', 'sessions', 'reads'],
  user_sessions: ['sessions'],
  calls: ['reads'],
  locations: ['reads'],
};

describe("each cached table's TRUNCATE trigger empties its caches in every process", () => {
  let rig: CacheProcesses;
  let db: TestDatabase;
  let processes: CacheProcess[];
  before(async () => {
    rig = await startCacheProcesses();
    ({ db, processes } = rig);
  });
  after(() => rig.close());
  const notificationsHandled = () => rig.notificationsHandled();

  /** TRUNCATE `table` CASCADE with only its own *_cache_truncate trigger on; the others are back on when it commits. */
  async function truncateAlone(table: string): Promise<void> {
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ relation: string; name: string }>(
        `SELECT c.relname AS relation, t.tgname AS name FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
          WHERE t.tgname LIKE '%\\_cache\\_truncate' AND c.relname <> $1`,
        [table],
      );
      for (const r of rows) await client.query(`ALTER TABLE ${r.relation} DISABLE TRIGGER ${r.name}`);
      await client.query(`TRUNCATE ${table} CASCADE`);
      for (const r of rows) await client.query(`ALTER TABLE ${r.relation} ENABLE TRIGGER ${r.name}`);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  /** A member (x-user-token) and a platform's access token, each answered from the cache in both processes. */
  async function cachedCredentials() {
    const member = await createMember(db.pool);
    const client = await createClient(db.pool, { name: 'Cached platform' });
    const tokens = await issueTokens(db.pool, { client, userId: member.user.id, organizationId: member.org.id });
    const platform = platformHeaders(tokens, client);
    const user = { 'x-user-token': member.token };
    for (const p of processes) {
      assert.equal((await p.t.app.inject({ url: '/locations', headers: user })).statusCode, 200);
      assert.equal((await p.t.app.inject({ url: '/calls/recent', headers: platform })).statusCode, 200);
      assert.ok(p.caches.stores.sessions.size > 0 && p.caches.stores.access_tokens.size > 0, 'both credentials are cached');
    }
    return { member, user, platform };
  }

  /** After the TRUNCATE of `table`: the caches it names are empty in both processes, and both refuse the credentials. */
  async function assertFlushed(table: string, credentials: Awaited<ReturnType<typeof cachedCredentials>>) {
    await notificationsHandled();
    for (const p of processes) {
      for (const cache of CACHED_TABLES[table]!) {
        if (cache === 'reads' || cache === 'clients') continue;
        assert.equal(p.caches.stores[cache].size, 0, `TRUNCATE ${table}: the ${cache} cache is empty`);
      }
      assert.equal((await p.t.app.inject({ url: '/locations', headers: credentials.user })).statusCode, 401);
      assert.equal((await p.t.app.inject({ url: '/calls/recent', headers: credentials.platform })).statusCode, 401);
    }
  }

  test('TRUNCATE users: sessions and access tokens cached in both processes are refused by both', async () => {
    const credentials = await cachedCredentials();
    await truncateAlone('users');
    await assertFlushed('users', credentials);
  });

  test('TRUNCATE memberships: sessions and access tokens cached in both processes are refused by both', async () => {
    const credentials = await cachedCredentials();
    await truncateAlone('memberships');
    await assertFlushed('memberships', credentials);
  });

  test('TRUNCATE organizations: sessions, access tokens and read bodies cached in both processes are gone from both', async () => {
    const credentials = await cachedCredentials();
    for (const p of processes) {
      assert.equal((await p.t.app.inject({ url: '/locations', headers: credentials.user })).json().length, 0);
      assert.ok(p.caches.stores.reads.size > 0, 'the /locations body is cached');
    }
    await truncateAlone('organizations');
    await assertFlushed('organizations', credentials);
    for (const p of processes) assert.equal(p.caches.stores.reads.size, 0, 'the read bodies are gone');
  });

  test('TRUNCATE locations: a /locations body cached in both processes is read again by both', async () => {
    const member = await createMember(db.pool);
    const user = { 'x-user-token': member.token };
    const created = await processes[0]!.t.app.inject({
      method: 'POST',
      url: '/locations',
      headers: user,
      payload: { name: 'Depot', latitude: 10, longitude: 20 },
    });
    assert.equal(created.statusCode, 201, created.body);
    for (const p of processes) assert.equal((await p.t.app.inject({ url: '/locations', headers: user })).json().length, 1);
    await truncateAlone('locations');
    await notificationsHandled();
    for (const p of processes) assert.deepEqual((await p.t.app.inject({ url: '/locations', headers: user })).json(), []);
  });

  test('every cached table has its update, delete and truncate cache triggers, the truncate one naming its caches; no other table has any', async () => {
    const { rows } = await db.pool.query<{ relation: string; name: string; definition: string }>(
      `SELECT c.relname AS relation, t.tgname AS name, pg_get_triggerdef(t.oid) AS definition
         FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE NOT t.tgisinternal AND n.nspname = 'public' AND t.tgname LIKE '%\\_cache\\_%'`,
    );
    assert.deepEqual([...new Set(rows.map((r) => r.relation))].sort(), Object.keys(CACHED_TABLES).sort(), 'the tables with cache triggers');
    for (const [table, caches] of Object.entries(CACHED_TABLES)) {
      const names = rows.filter((r) => r.relation === table).map((r) => r.name);
      for (const kind of ['update', 'delete', 'truncate']) {
        assert.ok(names.includes(`${table}_cache_${kind}`), `${table} has ${table}_cache_${kind} (it has ${names.join(', ')})`);
      }
      const truncate = rows.find((r) => r.name === `${table}_cache_truncate`)!;
      assert.match(truncate.definition, /AFTER TRUNCATE/);
      const flushed = [...(truncate.definition.match(/\(([^)]*)\)\s*$/)?.[1] ?? '').matchAll(/'([^']*)'/g)].map((m) => m[1]);
      assert.deepEqual(flushed.sort(), [...caches].sort(), `TRUNCATE ${table} flushes ${caches.join(', ')}: ${truncate.definition}`);
    }
  });
});
