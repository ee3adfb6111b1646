import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';

// Never log secrets: what the application's logger (src/http/logger.ts)
// writes when a log call is handed one, field by field. The censor replaced
// pino's `redact` paths; every path those covered is checked here.
describe('the logger censors secrets', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  /** The line written for `marker` (its message), parsed; T names the fields the caller reads. */
  function lineOf<T>(marker: string): T {
    const lines = t.logs
      .join('')
      .split('\n')
      .filter((l) => l.includes(marker));
    assert.equal(lines.length, 1, `one line for ${marker}`);
    return JSON.parse(lines[0]!);
  }

  test("password, token, client_secret and secret of any object at the first level (pino's *.field), any letter case", () => {
    const given = {
      body: { user: 'ana', password: 'sk-password-1', token: 'sk-token-1' },
      client: { client_id: 'c1', client_secret: 'sk-client-secret-1', Secret: 'sk-secret-1' },
      count: 3,
    };
    t.app.log.info(given, 'fields line');
    const line = lineOf<{ body: unknown; client: unknown; count: number }>('fields line');
    assert.deepEqual(line.body, { user: 'ana', password: '[redacted]', token: '[redacted]' });
    assert.deepEqual(line.client, { client_id: 'c1', client_secret: '[redacted]', Secret: '[redacted]' });
    assert.equal(line.count, 3);
    assert.equal(given.body.password, 'sk-password-1', 'the object handed to the log call is not changed');
  });

  test("credential headers: req and res write no headers; any other object's headers are censored", () => {
    const headers = {
      authorization: 'Bearer sk-authorization-2',
      'x-user-token': 'sk-user-token-2',
      'x-client-secret': 'sk-client-secret-2',
      cookie: 'sid=sk-cookie-2',
      'content-type': 'application/json',
    };
    t.app.log.info(
      {
        req: { method: 'POST', url: '/calls?code=sk-code-2', ip: '127.0.0.1', headers },
        res: { statusCode: 201, headers: { 'set-cookie': 'sid=sk-set-cookie-2' } },
        request: { headers },
        response: { headers: { 'Set-Cookie': 'sid=sk-set-cookie-3' } },
        forwarded: headers,
      },
      'headers line',
    );
    const line = lineOf<{
      req: unknown;
      res: unknown;
      request: { headers: unknown };
      response: { headers: unknown };
      forwarded: unknown;
    }>('headers line');
    assert.deepEqual(line.req, { method: 'POST', url: '/calls?code=[redacted]', remoteAddress: '127.0.0.1' });
    assert.deepEqual(line.res, { statusCode: 201 });
    const censored = {
      authorization: '[redacted]',
      'x-user-token': '[redacted]',
      'x-client-secret': '[redacted]',
      cookie: '[redacted]',
      'content-type': 'application/json',
    };
    assert.deepEqual(line.request.headers, censored);
    assert.deepEqual(line.response.headers, { 'Set-Cookie': '[redacted]' });
    assert.deepEqual(line.forwarded, censored);
    assert.doesNotMatch(JSON.stringify(line), /sk-/);
  });

  test("an error's own secret fields and headers, after pino's error serializer", () => {
    const error = Object.assign(new Error('upstream refused'), {
      token: 'sk-token-4',
      headers: { authorization: 'Bearer sk-authorization-4' },
      status: 401,
    });
    t.app.log.error({ err: error }, 'error line');
    const line = lineOf<{ err: { message: string; status: number; token: string; headers: unknown; stack?: string } }>('error line');
    assert.equal(line.err.message, 'upstream refused');
    assert.equal(line.err.status, 401);
    assert.equal(line.err.token, '[redacted]');
    assert.deepEqual(line.err.headers, { authorization: '[redacted]' });
    assert.ok(line.err.stack, 'the stack is kept');
  });

  test("a child logger's bindings", () => {
    t.app.log.child({ component: 'test', session: { token: 'sk-token-5' } }).info('child line');
    const line = lineOf<{ component: string; session: unknown }>('child line');
    assert.equal(line.component, 'test');
    assert.deepEqual(line.session, { token: '[redacted]' });
  });

  test("a request's credentials reach no line: the request log writes method, masked URL, status and time", async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: '/locations?access_token=sk-query-6',
      headers: {
        'x-user-token': 'sk-user-token-6',
        authorization: 'Bearer sk-authorization-6',
        'x-client-secret': 'sk-client-secret-6',
        cookie: 'sid=sk-cookie-6',
      },
    });
    // A token in the query string (RFC 6750 §2.3) is no credential here: an undeclared parameter, refused by name.
    assert.equal(response.statusCode, 400);
    assert.deepEqual(response.json().errors, [{ field: 'access_token', message: 'is not an allowed field' }]);
    const logs = t.logs.join('');
    assert.match(logs, /access_token=\[redacted\]/, 'the request was logged');
    assert.doesNotMatch(logs, /sk-[a-z-]+-6/);
  });
});
