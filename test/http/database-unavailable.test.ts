import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '../../src/db/availability.ts';
import { createPool } from '../../src/db/pool.ts';
import { withTransaction } from '../../src/db/transaction.ts';
import type { Problem } from '../../src/http/problem-details.plugin.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createMember } from '../helpers/fixtures.ts';

/** A port on 127.0.0.1 where nothing listens: connections are refused. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function assertUnavailableProblem(res: { statusCode: number; headers: Record<string, unknown>; body: string; json(): Problem }) {
  assert.equal(res.statusCode, 503, res.body);
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
  assert.equal(res.headers['retry-after'], String(DATABASE_RETRY_AFTER_SECONDS));
  const body = res.json();
  assert.equal(body.code, 'SERVICE_UNAVAILABLE');
  assert.equal(body.status, 503);
  assert.equal(body.type, '/problems/service-unavailable');
}

// Every answer a client gets while PostgreSQL cannot be reached: 503 with
// Retry-After in the format of the route (problem+json, OAuth JSON, an HTML
// page), never a 500, and one log line for the outage, not one per request.
describe('requests while the database cannot be reached', () => {
  let t: TestApp;
  let unreachable: TestDatabase;

  before(async () => {
    const url = `postgres://postgres@127.0.0.1:${await closedPort()}/nowhere`;
    const pool = createPool(url, 4);
    unreachable = { name: 'nowhere', url, pool, drop: async () => {} };
    t = await startTestApp({ db: unreachable });
  });
  after(async () => {
    await t.close();
    await unreachable.pool.end();
  });

  test('API routes answer 503 SERVICE_UNAVAILABLE problem+json with Retry-After', async () => {
    const headers = { 'x-user-token': 'sbu_whatever' };
    assertUnavailableProblem(await t.app.inject({ method: 'POST', url: '/calls', headers, payload: { summary: 'x' } }));
    assertUnavailableProblem(await t.app.inject({ url: '/locations', headers }));
    assertUnavailableProblem(
      await t.app.inject({
        method: 'POST',
        url: '/auth/sessions',
        payload: { email: 'someone@example.com', password: 'password123' },
      }),
    );
    assertUnavailableProblem(
      await t.app.inject({
        url: '/calls/recent',
        headers: { authorization: 'Bearer sbat_x', 'x-client-id': 'a', 'x-client-secret': 'b' },
      }),
    );
  });

  test('/readyz answers 503 NOT_READY with Retry-After; /healthz still 200', async () => {
    const ready = await t.app.inject({ url: '/readyz' });
    assert.equal(ready.statusCode, 503);
    assert.equal(ready.json().code, 'NOT_READY');
    assert.equal(ready.headers['retry-after'], String(DATABASE_RETRY_AFTER_SECONDS));
    assert.equal((await t.app.inject({ url: '/healthz' })).statusCode, 200);
  });

  test('the OAuth JSON endpoints answer 503 temporarily_unavailable with Retry-After', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'grant_type=refresh_token&refresh_token=sbr_x&client_id=a&client_secret=b',
    });
    assert.equal(res.statusCode, 503, res.body);
    assert.equal(res.json().error, 'temporarily_unavailable');
    assert.equal(res.headers['retry-after'], String(DATABASE_RETRY_AFTER_SECONDS));
    const userinfo = await t.app.inject({ url: '/oauth/userinfo', headers: { authorization: 'Bearer sbat_x' } });
    assert.equal(userinfo.statusCode, 503, userinfo.body);
  });

  test('web pages answer a 503 page', async () => {
    for (const url of ['/ui/calls', '/oauth/authorize?client_id=x&response_type=code']) {
      const res = await t.app.inject({ url, headers: { cookie: 'sb_session=sbu_whatever' } });
      assert.equal(res.statusCode, 503, `${url}: ${res.body.slice(0, 200)}`);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.match(res.body, /Service unavailable/);
      assert.equal(res.headers['retry-after'], String(DATABASE_RETRY_AFTER_SECONDS));
    }
  });

  test('the outage is logged once, not once per request, and no request was logged as an unhandled error', async () => {
    for (let i = 0; i < 5; i++) await t.app.inject({ url: '/locations', headers: { 'x-user-token': 'sbu_whatever' } });
    const lines = t.logs.map((line) => JSON.parse(line) as { msg: string; level: number });
    assert.equal(lines.filter((line) => line.msg === 'database unreachable').length, 1);
    assert.equal(lines.filter((line) => line.msg === 'unhandled error').length, 0);
  });
});

describe('a pool that cannot hand out a connection in time', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(() => db.drop());

  test('the pool timeout counts as the database being unavailable (503), and the held connection is unaffected', async () => {
    const pool = new pg.Pool({ connectionString: db.url, max: 1, connectionTimeoutMillis: 200 });
    pool.on('error', () => {});
    const t = await startTestApp({ db: { ...db, pool, drop: async () => {} }, pool });
    const held = await connectWithinSeconds(pool, 30);
    try {
      const member = await createMember(db.pool);
      assertUnavailableProblem(await t.app.inject({ url: '/locations', headers: { 'x-user-token': member.token } }));
    } finally {
      held.release();
      await t.close();
      await pool.end();
    }
  });
});

// The held connection waits for no one, so a 200 ms timeout there means a starved machine was slow to start a
// backend (seen on a loaded CI run), not the behaviour under test: try again until the deadline.
async function connectWithinSeconds(pool: pg.Pool, seconds: number): Promise<pg.PoolClient> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    try {
      return await pool.connect();
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
  }
}

describe('isDatabaseUnavailable', () => {
  test('connection failures and shutdown SQLSTATEs are outages; statement errors are not', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', '57P01', '57P02', '57P03', '08006', '08001', '53300']) {
      assert.equal(isDatabaseUnavailable(Object.assign(new Error('x'), { code })), true, code);
    }
    assert.equal(isDatabaseUnavailable(new Error('Connection terminated unexpectedly')), true);
    assert.equal(isDatabaseUnavailable(new Error('timeout exceeded when trying to connect')), true);
    assert.equal(isDatabaseUnavailable(new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })])), true);
    for (const code of ['23505', '22P02', '42P01', '40001']) {
      assert.equal(isDatabaseUnavailable(Object.assign(new Error('Connection terminated'), { code })), false, code);
    }
    assert.equal(isDatabaseUnavailable(new TypeError('x is undefined')), false);
    assert.equal(isDatabaseUnavailable(undefined), false);
  });

  test('a transaction whose connection was ended by the server destroys that connection instead of pooling it', async () => {
    const db = await createTestDatabase();
    try {
      const pool = createPool(db.url, 1);
      await assert.rejects(
        withTransaction(pool, async (client) => {
          await client.query('SELECT pg_terminate_backend(pg_backend_pid())');
        }),
        (error: unknown) => isDatabaseUnavailable(error),
      );
      // The only connection was dropped, so the next transaction gets a fresh one.
      assert.equal(await withTransaction(pool, async (client) => (await client.query('SELECT 1 AS one')).rows[0].one), 1);
      await pool.end();
    } finally {
      await db.drop();
    }
  });
});
