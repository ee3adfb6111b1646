// RATE_LIMIT per x-user-token on /locations and /service-areas: in memory,
// and in Redis shared by several instances. The Redis tests run when
// REDIS_URL is set (CI sets it to the machine's Redis) and are skipped, with
// the reason, otherwise.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import type { LightMyRequestResponse } from 'fastify';
import { hashToken } from '../../src/auth/tokens.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember } from '../helpers/fixtures.ts';
import { asUser } from '../helpers/token-client.ts';

const LIMIT = { RATE_LIMIT: '5/min' };
const REDIS_URL = process.env.REDIS_URL;
const SKIP_REDIS = REDIS_URL ? false : 'REDIS_URL is not set; run with REDIS_URL=redis://127.0.0.1:6379 to test the shared Redis store';

function assertAllowed(res: LightMyRequestResponse, remaining: number) {
  assert.ok(res.statusCode < 300, `${res.statusCode} ${res.body}`);
  assert.equal(res.headers['ratelimit-limit'], '5');
  assert.equal(res.headers['ratelimit-remaining'], String(remaining));
  const reset = Number(res.headers['ratelimit-reset']);
  assert.ok(reset > 0 && reset <= 60, `ratelimit-reset ${reset}`);
}

function assertLimited(res: LightMyRequestResponse) {
  assert.equal(res.statusCode, 429, res.body);
  assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
  assert.equal(res.json().code, 'REQUEST_RATE_LIMITED');
  assert.equal(res.json().status, 429);
  const retryAfter = Number(res.headers['retry-after']);
  assert.ok(Number.isInteger(retryAfter) && retryAfter > 0 && retryAfter <= 60, `retry-after ${res.headers['retry-after']}`);
  assert.equal(res.headers['ratelimit-limit'], '5');
  assert.equal(res.headers['ratelimit-remaining'], '0');
  assert.equal(res.headers['ratelimit-reset'], res.headers['retry-after']);
}

describe('per-token rate limit, in memory', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ env: LIMIT });
  });
  after(() => t.close());

  test('the sixth request of a token within the window is 429 with Retry-After and RateLimit-* headers', async () => {
    const member = await createMember(t.db.pool);
    const api = asUser(t.app, member.token);
    const location = await api.post('/locations', { name: 'Counted' });
    assertAllowed(location, 4);
    assertAllowed(await api.get('/locations'), 3);
    assertAllowed(await api.get(`/locations/${location.json().id}`), 2);
    assertAllowed(await api.post('/service-areas', { label: 'Counted too' }), 1);
    assertAllowed(await api.get('/service-areas'), 0);
    assertLimited(await api.get('/service-areas'));
    assertLimited(await api.get('/locations'));
  });

  test('a limited token cannot write, and is refused before its body is even read', async () => {
    const member = await createMember(t.db.pool);
    const api = asUser(t.app, member.token);
    for (let i = 0; i < 5; i++) await api.get('/locations');
    assertLimited(await api.post('/locations', { name: 'Too late' }));
    assertLimited(await api.post('/locations', { bogus: true }));
    const { rows } = await t.db.pool.query('SELECT count(*)::int AS n FROM locations WHERE organization_id = $1', [member.org.id]);
    assert.equal(rows[0].n, 0);
  });

  test('each token has its own budget, even within one organization', async () => {
    const first = await createMember(t.db.pool);
    const second = await createMember(t.db.pool, { org: first.org });
    for (let i = 0; i < 5; i++) await asUser(t.app, first.token).get('/locations');
    assertLimited(await asUser(t.app, first.token).get('/locations'));
    assertAllowed(await asUser(t.app, second.token).get('/locations'), 4);
  });

  test('other routes are not limited by this budget', async () => {
    const member = await createMember(t.db.pool);
    for (let i = 0; i < 6; i++) await asUser(t.app, member.token).get('/locations');
    const session = await t.app.inject({ url: '/auth/session', headers: { 'x-user-token': member.token } });
    assert.equal(session.statusCode, 200);
  });
});

describe('per-token rate limit, in Redis', { skip: SKIP_REDIS }, () => {
  const connections: Redis[] = [];

  async function connect(): Promise<Redis> {
    const redis = new Redis(REDIS_URL!, { lazyConnect: true, maxRetriesPerRequest: 2 });
    await redis.connect();
    connections.push(redis);
    return redis;
  }

  async function keys(redis: Redis, namespace: string): Promise<string[]> {
    return redis.keys(`${namespace}*`);
  }

  after(async () => {
    await Promise.all(connections.map((redis) => redis.quit()));
  });

  test('the budget is kept in Redis, keyed by a hash of the token', async () => {
    const namespace = `sbtest_${randomBytes(6).toString('hex')}`;
    const redis = await connect();
    const t = await startTestApp({ env: LIMIT, redis, rateLimitNamespace: namespace });
    try {
      const member = await createMember(t.db.pool);
      const api = asUser(t.app, member.token);
      for (let remaining = 4; remaining >= 0; remaining--) assertAllowed(await api.get('/locations'), remaining);
      assertLimited(await api.get('/service-areas'));

      const stored = await keys(redis, namespace);
      assert.equal(stored.length, 1, stored.join());
      const key = stored[0]!;
      assert.ok(key.endsWith(`user-token:${hashToken(member.token).toString('base64url')}`), key);
      assert.ok(!key.includes(member.token.slice(4)), 'the raw token never reaches Redis');
      assert.equal(await redis.get(key), '6');
      const ttl = await redis.pttl(key);
      assert.ok(ttl > 0 && ttl <= 60_000);
    } finally {
      await t.close();
      await redis.del(...(await keys(redis, namespace)), `${namespace}:none`);
    }
  });

  test('two app instances sharing one Redis share one budget per token', async () => {
    const namespace = `sbtest_${randomBytes(6).toString('hex')}`;
    const [redisA, redisB] = [await connect(), await connect()];
    const a = await startTestApp({ env: LIMIT, redis: redisA, rateLimitNamespace: namespace });
    const b = await startTestApp({ env: LIMIT, redis: redisB, rateLimitNamespace: namespace, db: a.db });
    try {
      const member = await createMember(a.db.pool);
      const onA = asUser(a.app, member.token);
      const onB = asUser(b.app, member.token);
      assertAllowed(await onA.get('/locations'), 4);
      assertAllowed(await onB.get('/locations'), 3);
      assertAllowed(await onA.post('/service-areas', { label: 'A' }), 2);
      assertAllowed(await onB.get('/service-areas'), 1);
      assertAllowed(await onB.get('/locations'), 0);
      assertLimited(await onA.get('/locations'));
      assertLimited(await onB.get('/service-areas'));

      const other = await createMember(a.db.pool);
      assertAllowed(await asUser(b.app, other.token).get('/locations'), 4);
    } finally {
      await b.close();
      await a.close();
      await redisA.del(...(await keys(redisA, namespace)), `${namespace}:none`);
    }
  });
});
