// Requests a careless or hostile client sends, answered as the DESIGN §5
// error contract says: a 4xx problem naming what is wrong, never a 500.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember, type Member } from '../helpers/fixtures.ts';

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
      method: 'POST', url: '/locations',
      headers: { 'content-type': 'application/json', 'x-user-token': member.token },
      payload: '['.repeat(depth) + ']'.repeat(depth),
    });
    assert.equal(res.statusCode, 400);
    assert.equal(res.headers['content-type'], PROBLEM);
    assert.ok(!t.logs.some((line) => line.includes('"level":50')));
  });

  test('a NUL deep inside a body is named by its path', async () => {
    const res = await t.app.inject({
      method: 'POST', url: '/locations',
      headers: { 'x-user-token': member.token },
      payload: { name: 'x', city: 'ok', nested: [{ a: 'fine' }, { b: 'bad\u0000' }] },
    });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json().errors, [{ field: 'nested.1.b', message: 'must not contain NUL (U+0000) characters' }]);
  });
});

describe('URLs the router refuses', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
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
  });
});
