// What the two hot reads cost in statements, with and without process caches:
// with none (NO_CACHES), one statement reads the credential's principal and
// the body together; with caches, the same statement fills them and the next
// request costs nothing, until a change this process commits evicts the body.
// Refusals are decided on the principal either way (checkPlatformAccess).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { listenForInvalidations, type CacheListener } from '../../src/cache/cache-listener.ts';
import { createProcessCaches } from '../../src/cache/process-caches.ts';
import type { Pool } from '../../src/db/pool.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { completeCall, connectPlatform } from '../helpers/webhooks.ts';

/** The statements `pool` runs while `work` does. */
async function statements(pool: Pool, work: () => Promise<unknown>): Promise<number> {
  const original = pool.query.bind(pool);
  let count = 0;
  (pool as { query: unknown }).query = (...args: unknown[]) => {
    count++;
    return (original as (...a: unknown[]) => unknown)(...args);
  };
  try {
    await work();
  } finally {
    (pool as { query: unknown }).query = original;
  }
  return count;
}

describe('hot reads: statements per request', () => {
  let db: TestDatabase;
  let uncached: TestApp;
  let cached: TestApp;
  let listener: CacheListener;

  before(async () => {
    db = await createTestDatabase();
    uncached = await startTestApp({ db });
    const caches = createProcessCaches({ maxAgeMs: 60_000 });
    listener = await listenForInvalidations(db.url, caches, pino({ level: 'silent' }));
    cached = await startTestApp({ db, caches });
  });
  after(async () => {
    await cached.close();
    await uncached.close();
    await listener.close();
    await db.drop();
  });

  test('without caches: GET /calls/recent and GET /locations are one statement each, every time', async () => {
    const org = await connectPlatform(uncached);
    await completeCall(uncached, org.member);
    for (let i = 0; i < 2; i++) {
      assert.equal(
        await statements(uncached.app.db, async () => {
          const res = await uncached.app.inject({ url: '/calls/recent', headers: org.headers });
          assert.equal(res.json().length, 1);
        }),
        1,
      );
      assert.equal(
        await statements(uncached.app.db, async () => {
          const res = await uncached.app.inject({ url: '/locations', headers: { 'x-user-token': org.member.token } });
          assert.equal(res.statusCode, 200);
        }),
        1,
      );
    }
  });

  test('with caches: the first request reads once, the next reads nothing; a call completed here is seen at once', async () => {
    const org = await connectPlatform(cached);
    const recent = () => cached.app.inject({ url: '/calls/recent', headers: org.headers });
    assert.equal(await statements(cached.app.db, async () => assert.deepEqual((await recent()).json(), [])), 1);
    assert.equal(await statements(cached.app.db, async () => assert.deepEqual((await recent()).json(), [])), 0);
    const call = await completeCall(cached, org.member);
    assert.equal(
      await statements(cached.app.db, async () =>
        assert.deepEqual(
          (await recent()).json().map((c: { id: string }) => c.id),
          [call.id],
        ),
      ),
      1,
    );

    const locations = () => cached.app.inject({ url: '/locations', headers: { 'x-user-token': org.member.token } });
    assert.equal(await statements(cached.app.db, async () => assert.equal((await locations()).statusCode, 200)), 1);
    assert.equal(await statements(cached.app.db, async () => assert.equal((await locations()).statusCode, 200)), 0);
  });

  test("refusals follow the guard's order whether the principal was read or cached", async () => {
    const org = await connectPlatform(cached, { scopes: ['contacts:read'] });
    for (const t of [uncached, cached, cached]) {
      const wrongSecret = await t.app.inject({ url: '/calls/recent', headers: { ...org.headers, 'x-client-secret': 'sbs_wrong' } });
      assert.equal(wrongSecret.json().code, 'OAUTH_CLIENT_INVALID', 'the client before the scope');
      const noScope = await t.app.inject({ url: '/calls/recent', headers: org.headers });
      assert.equal(noScope.statusCode, 403);
      assert.equal(noScope.json().code, 'OAUTH_INSUFFICIENT_SCOPE');
    }
  });
});
