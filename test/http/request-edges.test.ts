// Requests a careless or hostile client sends, answered as the error contract
// of docs/interface.md §7 says: a 4xx problem naming what is wrong, never a 500.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember, type Member } from '../helpers/fixtures.ts';
import { createClient, issueTokens, platformHeaders } from '../helpers/oauth.ts';

const PROBLEM = 'application/problem+json; charset=utf-8';

describe('request edges', () => {
  let t: TestApp;
  let member: Member;
  before(async () => {
    t = await startTestApp();
    member = await createMember(t.db.pool);
  });
  after(() => t.close());

  test('a deeply nested JSON body is a 400 problem, not a stack overflow', async () => {
    const depth = 30_000;
    const res = await t.app.inject({
      method: 'POST',
      url: '/locations',
      headers: { 'content-type': 'application/json', 'x-user-token': member.token },
      payload: '['.repeat(depth) + ']'.repeat(depth),
    });
    assert.equal(res.statusCode, 400);
    assert.equal(res.headers['content-type'], PROBLEM);
    assert.ok(!t.logs.some((line) => line.includes('"level":50')));
  });

  test('Content-Type: application/json with no body is no body, on every route', async () => {
    const other = await createMember(t.db.pool);
    const json = { 'content-type': 'application/json', 'x-user-token': other.token };
    const redeliver = await t.app.inject({
      method: 'POST',
      url: '/webhooks/deliveries/00000000-0000-4000-8000-000000000000/redeliver',
      headers: json,
    });
    assert.equal(redeliver.statusCode, 404);
    assert.equal(redeliver.json().code, 'WEBHOOK_DELIVERY_NOT_FOUND');
    const remove = await t.app.inject({ method: 'DELETE', url: '/webhooks/00000000-0000-4000-8000-000000000000', headers: json });
    assert.equal(remove.statusCode, 404);
    assert.equal(remove.json().code, 'WEBHOOK_SUBSCRIPTION_NOT_FOUND');
    const logout = await t.app.inject({ method: 'DELETE', url: '/auth/session', headers: json });
    assert.equal(logout.statusCode, 204);
  });

  test('a JSON body sent as text/plain is a 415 problem, like any other non-JSON type', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/locations',
        headers: { 'content-type': type, 'x-user-token': member.token },
        payload: '{"name":"x"}',
      });
      assert.equal(res.statusCode, 415, type);
      assert.equal(res.json().code, 'REQUEST_UNSUPPORTED_MEDIA_TYPE');
    }
  });

  test('a NUL deep inside a body is named by its path', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/locations',
      headers: { 'x-user-token': member.token },
      payload: { name: 'x', city: 'ok', nested: [{ a: 'fine' }, { b: 'bad\u0000' }] },
    });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json().errors, [{ field: 'nested.1.b', message: 'must not contain NUL (U+0000) characters' }]);
  });
});

describe('URLs the router refuses', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('a malformed percent-encoding in the path is a 400 problem naming the path', async () => {
    const res = await t.app.inject({ url: '/locations/%zz' });
    assert.equal(res.statusCode, 400);
    assert.equal(res.headers['content-type'], PROBLEM);
    assert.equal(res.json().code, 'REQUEST_VALIDATION');
    assert.deepEqual(res.json().errors, [{ field: 'path', message: 'is not a valid URL' }]);
  });

  test('an over-long path parameter is a 414 problem', async () => {
    const res = await t.app.inject({ url: `/locations/${'a'.repeat(5000)}` });
    assert.equal(res.statusCode, 414);
    assert.equal(res.headers['content-type'], PROBLEM);
    assert.equal(res.json().code, 'REQUEST_URL_TOO_LONG');
    assert.equal(res.json().status, 414);
    assert.equal(res.json().title, 'URI Too Long');
  });
});

describe('401 challenges', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('every 401 carries WWW-Authenticate: Bearer, x-user-token and login failures too', async () => {
    const answers = await Promise.all([
      t.app.inject({ url: '/locations' }),
      t.app.inject({ url: '/locations', headers: { 'x-user-token': 'sbu_not-a-token' } }),
      t.app.inject({ url: '/auth/session' }),
      t.app.inject({ method: 'POST', url: '/auth/sessions', payload: { email: 'nobody@example.com', password: 'wrong password' } }),
    ]);
    for (const res of answers) {
      assert.equal(res.statusCode, 401);
      assert.match(String(res.headers['www-authenticate']), /^Bearer realm="switchboard"/);
      assert.equal(res.headers['content-type'], PROBLEM);
    }
  });
});

describe('validation messages a client can act on', () => {
  let t: TestApp;
  let member: Member;
  before(async () => {
    t = await startTestApp();
    member = await createMember(t.db.pool);
  });
  after(() => t.close());

  test('a malformed id is one "must be a UUID", not two regular expressions', async () => {
    const res = await t.app.inject({ url: '/locations/not-a-uuid', headers: { 'x-user-token': member.token } });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json().errors, [{ field: 'id', message: 'must be a UUID' }]);
  });

  test('a blank name says so', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/locations',
      headers: { 'x-user-token': member.token },
      payload: { name: '   ' },
    });
    assert.deepEqual(res.json().errors, [{ field: 'name', message: 'must not be blank' }]);
  });

  test('an empty name is one "must not be blank", not a length error beside it', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/locations',
      headers: { 'x-user-token': member.token },
      payload: { name: '' },
    });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json().errors, [{ field: 'name', message: 'must not be blank' }]);
  });

  test('POST /webhooks/subscribe names the one allowed event and states the secret rule', async () => {
    const client = await createClient(t.db.pool);
    const tokens = await issueTokens(t.db.pool, { client, userId: member.user.id, organizationId: member.org.id });
    const res = await t.app.inject({
      method: 'POST',
      url: '/webhooks/subscribe',
      headers: platformHeaders(tokens, client),
      payload: { hookUrl: 'https://example.com/h', event: 'call.started', secret: 'sécret' },
    });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json().errors, [
      { field: 'event', message: 'must be call.completed' },
      { field: 'secret', message: 'must be 1 to 256 printable ASCII characters, without leading or trailing spaces' },
    ]);
  });
});
