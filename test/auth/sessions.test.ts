import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember, createOrg, PASSWORD, uniqueEmail } from '../helpers/fixtures.ts';
import { createUser } from '../../src/organizations/organizations.service.ts';
import { setOrganizationActive } from '../../src/organizations/organizations.queries.ts';
import { setUserActiveByEmail } from '../../src/organizations/users.queries.ts';
import { pino } from 'pino';
import { listenForInvalidations } from '../../src/cache/cache-listener.ts';
import { createProcessCaches } from '../../src/cache/process-caches.ts';
import { SESSION_COOKIE } from '../../src/web/session.ts';
import { insertSession } from '../../src/auth/sessions.queries.ts';
import { generateToken, hashToken } from '../../src/auth/tokens.ts';
import { commitUnannounced, createTestDatabase } from '../helpers/db.ts';

describe('x-user-token sessions', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const login = (body: object) => t.app.inject({ method: 'POST', url: '/auth/sessions', payload: body });

  test('logging in returns a token that opens /auth/session', async () => {
    const member = await createMember(t.db.pool);
    const res = await login({ email: member.email, password: PASSWORD });
    assert.equal(res.statusCode, 201);
    const body = res.json();
    assert.match(body.token, /^sbu_[\w-]{43}$/);
    assert.equal(body.user.email, member.email);
    assert.equal(body.organization.id, member.org.id);
    assert.ok(Date.parse(body.expires_at) > Date.now() + 29 * 86400_000);

    const session = await t.app.inject({ url: '/auth/session', headers: { 'x-user-token': body.token } });
    assert.equal(session.statusCode, 200);
    assert.equal(session.json().user.id, member.user.id);
    assert.equal(session.json().organization.role, 'owner');
  });

  test('unknown email and wrong password get identical 401 answers', async () => {
    const member = await createMember(t.db.pool);
    const wrongPassword = await login({ email: member.email, password: 'not the password' });
    const unknownEmail = await login({ email: uniqueEmail('nobody'), password: 'not the password' });
    assert.equal(wrongPassword.statusCode, 401);
    assert.equal(unknownEmail.statusCode, 401);
    assert.deepEqual(wrongPassword.json(), unknownEmail.json());
    assert.equal(wrongPassword.headers['content-type'], 'application/problem+json; charset=utf-8');
  });

  test('a user of several organizations picks one and can switch', async () => {
    const member = await createMember(t.db.pool);
    const second = await createOrg(t.db.pool, 'Second');
    await createUser(t.db.pool, { email: member.email, password: PASSWORD, organizationId: second.id, role: 'member' });

    const res = await login({ email: member.email, password: PASSWORD, organization_id: second.id });
    assert.equal(res.statusCode, 201);
    assert.equal(res.json().organization.id, second.id);
    assert.equal(res.json().organizations.length, 2);

    const token = res.json().token;
    const switched = await t.app.inject({
      method: 'PUT',
      url: '/auth/session/organization',
      headers: { 'x-user-token': token },
      payload: { organization_id: member.org.id },
    });
    assert.equal(switched.statusCode, 200);
    assert.equal(switched.json().organization.id, member.org.id);
    const after = await t.app.inject({ url: '/auth/session', headers: { 'x-user-token': token } });
    assert.equal(after.json().organization.id, member.org.id);

    const foreign = await createOrg(t.db.pool, 'Foreign');
    const refused = await t.app.inject({
      method: 'PUT',
      url: '/auth/session/organization',
      headers: { 'x-user-token': token },
      payload: { organization_id: foreign.id },
    });
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.json().code, 'AUTH_NOT_A_MEMBER');
  });

  test('DELETE /auth/session ends the session', async () => {
    const member = await createMember(t.db.pool);
    const res = await t.app.inject({ method: 'DELETE', url: '/auth/session', headers: { 'x-user-token': member.token } });
    assert.equal(res.statusCode, 204);
    const again = await t.app.inject({ url: '/auth/session', headers: { 'x-user-token': member.token } });
    assert.equal(again.statusCode, 401);
  });

  test('deactivating the user makes every credential 401 at once', async () => {
    const member = await createMember(t.db.pool);
    assert.equal((await t.app.inject({ url: '/auth/session', headers: { 'x-user-token': member.token } })).statusCode, 200);
    await setUserActiveByEmail(t.db.pool, member.email, false);
    assert.equal((await t.app.inject({ url: '/auth/session', headers: { 'x-user-token': member.token } })).statusCode, 401);
    assert.equal((await login({ email: member.email, password: PASSWORD })).statusCode, 401);
  });

  test('deactivating the organization makes its sessions 401 at once', async () => {
    const member = await createMember(t.db.pool);
    await setOrganizationActive(t.db.pool, member.org.id, false);
    const res = await t.app.inject({ url: '/auth/session', headers: { 'x-user-token': member.token } });
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().code, 'AUTH_TOKEN_INVALID');
    assert.equal((await login({ email: member.email, password: PASSWORD })).statusCode, 403);
  });

  test('missing and malformed tokens are 401 problems', async () => {
    const missing = await t.app.inject({ url: '/auth/session' });
    assert.equal(missing.statusCode, 401);
    assert.equal(missing.json().code, 'AUTH_TOKEN_MISSING');
    const bogus = await t.app.inject({ url: '/auth/session', headers: { 'x-user-token': 'sbu_nope' } });
    assert.equal(bogus.statusCode, 401);
    assert.equal(bogus.json().code, 'AUTH_TOKEN_INVALID');
  });

  test('tokens are stored only as SHA-256 hashes', async () => {
    const member = await createMember(t.db.pool);
    const { rows } = await t.db.pool.query('SELECT * FROM user_sessions');
    const dump = JSON.stringify(rows);
    assert.ok(!dump.includes(member.token));
    assert.ok(!dump.includes(member.token.slice(4)));
    assert.ok(rows.every((row) => Buffer.isBuffer(row.token_hash) && row.token_hash.length === 32));
  });

  test('login attempts are rate limited per email', async () => {
    const member = await createMember(t.db.pool);
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/auth/sessions',
        payload: { email: member.email, password: 'wrong' },
        remoteAddress: `10.0.0.${i + 1}`,
      });
      statuses.push(res.statusCode);
    }
    assert.deepEqual(statuses.slice(0, 10), Array(10).fill(401));
    assert.equal(statuses[10], 429);
    const blocked = await login({ email: member.email, password: PASSWORD });
    assert.equal(blocked.statusCode, 429, 'even the right password waits out the window');
    assert.ok(Number(blocked.headers['retry-after']) > 0);
  });

  test('successful logins are not counted: signing in often never locks anyone out', async () => {
    const member = await createMember(t.db.pool);
    for (let i = 0; i < 15; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/auth/sessions',
        payload: { email: member.email, password: PASSWORD },
        remoteAddress: '10.7.7.7',
      });
      assert.equal(res.statusCode, 201, `sign-in ${i + 1}`);
    }
  });

  test("a successful login clears the email's failure count", async () => {
    const member = await createMember(t.db.pool);
    const attempt = (password: string) =>
      t.app.inject({ method: 'POST', url: '/auth/sessions', payload: { email: member.email, password }, remoteAddress: '10.6.6.6' });
    for (let i = 0; i < 9; i++) assert.equal((await attempt('wrong')).statusCode, 401);
    assert.equal((await attempt(PASSWORD)).statusCode, 201);
    for (let i = 0; i < 9; i++) assert.equal((await attempt('wrong')).statusCode, 401, 'the count started again');
  });

  test('login attempts are rate limited per IP', async () => {
    let last = 0;
    for (let i = 0; i < 31; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/auth/sessions',
        payload: { email: uniqueEmail(), password: 'wrong' },
        remoteAddress: '10.9.9.9',
      });
      last = res.statusCode;
    }
    assert.equal(last, 429);
  });

  // The throttle counts before verifying: counting after would let concurrent
  // guesses all read "not blocked" and all be checked.
  test('50 concurrent wrong passwords for one email: at most 10 are verified, the rest are 429 with Retry-After', async () => {
    const member = await createMember(t.db.pool);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        t.app.inject({
          method: 'POST',
          url: '/auth/sessions',
          payload: { email: member.email, password: `guess-${i}` },
          remoteAddress: `10.20.${Math.floor(i / 200)}.${(i % 200) + 1}`,
        }),
      ),
    );
    const verified = results.filter((r) => r.statusCode === 401);
    const refused = results.filter((r) => r.statusCode === 429);
    assert.equal(verified.length, 10, `statuses: ${results.map((r) => r.statusCode).join(',')}`);
    assert.equal(refused.length, 40);
    for (const res of refused) {
      assert.equal(res.json().code, 'REQUEST_RATE_LIMITED');
      assert.ok(Number(res.headers['retry-after']) > 0 && Number(res.headers['retry-after']) <= 15 * 60);
    }
    assert.equal((await login({ email: member.email, password: PASSWORD })).statusCode, 429, 'the right password waits too');
  });

  test('60 concurrent wrong attempts from one address: at most 30 are verified, the rest are 429 with Retry-After', async () => {
    const results = await Promise.all(
      Array.from({ length: 60 }, () =>
        t.app.inject({
          method: 'POST',
          url: '/auth/sessions',
          payload: { email: uniqueEmail(), password: 'wrong' },
          remoteAddress: '10.30.30.30',
        }),
      ),
    );
    assert.equal(results.filter((r) => r.statusCode === 401).length, 30, `statuses: ${results.map((r) => r.statusCode).join(',')}`);
    const refused = results.filter((r) => r.statusCode === 429);
    assert.equal(refused.length, 30);
    assert.ok(refused.every((r) => Number(r.headers['retry-after']) > 0));
  });

  test("an attempt refused for its email does not use up its address's budget", async () => {
    const member = await createMember(t.db.pool);
    for (let i = 0; i < 10; i++) {
      await t.app.inject({
        method: 'POST',
        url: '/auth/sessions',
        payload: { email: member.email, password: 'wrong' },
        remoteAddress: `10.40.0.${i + 1}`,
      });
    }
    for (let i = 0; i < 40; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/auth/sessions',
        payload: { email: member.email, password: 'wrong' },
        remoteAddress: '10.40.1.1',
      });
      assert.equal(res.statusCode, 429);
    }
    const other = await createMember(t.db.pool);
    const res = await t.app.inject({
      method: 'POST',
      url: '/auth/sessions',
      payload: { email: other.email, password: PASSWORD },
      remoteAddress: '10.40.1.1',
    });
    assert.equal(res.statusCode, 201);
  });

  test('an expired session is refused: 401 for x-user-token, the login page for the web', async () => {
    const member = await createMember(t.db.pool);
    const opens = async () => (await t.app.inject({ url: '/auth/session', headers: { 'x-user-token': member.token } })).statusCode;
    const page = () => t.app.inject({ url: '/', cookies: { [SESSION_COOKIE]: member.token } });
    assert.equal(await opens(), 200);
    assert.equal((await page()).statusCode, 200);
    await t.db.pool.query("UPDATE user_sessions SET expires_at = now() - interval '1 second' WHERE user_id = $1", [member.user.id]);
    assert.equal(await opens(), 401);
    const web = await page();
    assert.equal(web.statusCode, 302);
    assert.match(String(web.headers.location), /^\/login/);
  });
});

describe('x-user-token sessions through the process cache', () => {
  test('a cached session is refused once it expires, with no notification to evict it', async () => {
    const db = await createTestDatabase();
    const caches = createProcessCaches({ maxAgeMs: 60_000 });
    const listener = await listenForInvalidations(db.url, caches, pino({ level: 'silent' }));
    const cached = await startTestApp({ db, caches });
    try {
      const member = await createMember(db.pool);
      // A session with ten seconds to live (an INSERT: nothing is notified), used and so cached while it lives:
      // long enough for the two requests below on a loaded machine running other test files beside this one.
      const token = generateToken('sbu');
      const session = await insertSession(db.pool, {
        tokenHash: hashToken(token),
        userId: member.user.id,
        organizationId: member.org.id,
        expiresAt: new Date(Date.now() + 10_000),
      });
      const opens = async () => (await cached.app.inject({ url: '/auth/session', headers: { 'x-user-token': token } })).statusCode;
      assert.equal(await opens(), 200);
      // Deleted where no notification tells: the session still opens, from the cache, until it expires.
      await commitUnannounced(db.pool, 'DELETE FROM user_sessions WHERE id = $1', [session.id]);
      assert.equal(await opens(), 200, 'the session is served from the cache');
      assert.ok(Date.now() < session.expires_at.getTime(), 'both requests were answered while the session lived');
      while (Date.now() <= session.expires_at.getTime()) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(await opens(), 401);
    } finally {
      await cached.close();
      await listener.close();
      await db.drop();
    }
  });
});
