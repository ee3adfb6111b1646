import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember, PASSWORD } from '../helpers/fixtures.ts';

describe('HTTP conventions', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
    t.app.get('/test/boom', async () => {
      throw new Error('SELECT secret FROM internals -- should never be shown');
    });
  });
  after(() => t.close());

  const isProblem = (res: { headers: Record<string, unknown> }) =>
    assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');

  test('malformed JSON is a 400 problem', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/auth/sessions',
      headers: { 'content-type': 'application/json' },
      payload: '{"email": ',
    });
    assert.equal(res.statusCode, 400);
    isProblem(res);
    assert.equal(res.json().code, 'REQUEST_INVALID_JSON');
    assert.equal(res.json().status, 400);
    assert.ok(res.json().type && res.json().title && res.json().detail);
  });

  test('a body over 64 KiB is 413', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/auth/sessions',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ email: 'a@example.com', password: 'x'.repeat(70 * 1024) }),
    });
    assert.equal(res.statusCode, 413);
    isProblem(res);
    assert.equal(res.json().code, 'REQUEST_BODY_TOO_LARGE');
  });

  test('unknown, missing and mistyped fields are named', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/auth/sessions', payload: { password: 5, extra: true } });
    assert.equal(res.statusCode, 400);
    isProblem(res);
    const fields = res
      .json()
      .errors.map((e: { field: string }) => e.field)
      .sort();
    assert.deepEqual(fields, ['email', 'extra', 'password']);
  });

  test('an unexpected fault is a 500 with a request id and no internals', async () => {
    const res = await t.app.inject({ url: '/test/boom', headers: { 'x-request-id': 'trace-me-123' } });
    assert.equal(res.statusCode, 500);
    isProblem(res);
    assert.equal(res.json().request_id, 'trace-me-123');
    assert.doesNotMatch(res.body, /SELECT|internals|at .*\.ts/);
    assert.ok(t.logs.some((line) => line.includes('trace-me-123') && line.includes('unhandled error')));
  });

  test('unknown routes are 404 problems', async () => {
    const res = await t.app.inject({ url: '/nope' });
    assert.equal(res.statusCode, 404);
    isProblem(res);
  });

  test('/healthz and /readyz answer', async () => {
    assert.equal((await t.app.inject({ url: '/healthz' })).statusCode, 200);
    const ready = await t.app.inject({ url: '/readyz' });
    assert.equal(ready.statusCode, 200);
    assert.equal(ready.json().status, 'ready');
  });

  test('passwords and tokens never appear in the log', async () => {
    const member = await createMember(t.db.pool);
    const login = await t.app.inject({
      method: 'POST',
      url: '/auth/sessions',
      payload: { email: member.email, password: PASSWORD },
      headers: { 'x-request-id': 'login-log-check' },
    });
    const token = login.json().token as string;
    await t.app.inject({ url: '/auth/session', headers: { 'x-user-token': token, authorization: 'Bearer sba_abcdefsecret' } });
    await t.app.inject({ url: `/auth/session?token=${token}&code=abc123code`, headers: { 'x-user-token': member.token } });
    const log = t.logs.join('');
    assert.ok(log.includes('login-log-check'), 'requests are logged with their id');
    for (const secret of [PASSWORD, token, member.token, 'sba_abcdefsecret', 'abc123code']) {
      assert.ok(!log.includes(secret), `log contains ${secret.slice(0, 8)}…`);
    }
  });

  test('the OpenAPI document describes the routes', async () => {
    const res = await t.app.inject({ url: '/openapi.json' });
    assert.equal(res.statusCode, 200);
    const doc = res.json();
    assert.equal(doc.openapi, '3.1.0');
    assert.ok(doc.paths['/auth/sessions'].post);
  });
});

describe('NUL characters', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('a string with U+0000 is a 400 naming the field, not a database error', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/auth/sessions', payload: { email: 'a\u0000@example.com', password: 'x' } });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json().errors, [{ field: 'email', message: 'must not contain NUL (U+0000) characters' }]);
  });
});

describe('API reference', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('/docs renders the OpenAPI document from local assets', async () => {
    const page = await t.app.inject({ url: '/docs/' });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /text\/html/);
    assert.doesNotMatch(page.body, /https?:\/\/(?:cdn|unpkg)/);
    const init = await t.app.inject({ url: '/docs/static/swagger-initializer.js' });
    assert.equal(init.statusCode, 200);
    assert.match(init.body, /\/openapi\.json/);
  });
});
