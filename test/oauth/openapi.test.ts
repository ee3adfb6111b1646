import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';

describe('OAuth endpoints in the OpenAPI document', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('token, revoke, userinfo, authorize and metadata are described', async () => {
    const res = await t.app.inject({ url: '/openapi.json' });
    assert.equal(res.statusCode, 200);
    const paths = res.json().paths;
    assert.ok(paths['/oauth/token'].post.requestBody);
    assert.ok(paths['/oauth/token'].post.responses['200']);
    assert.ok(paths['/oauth/revoke'].post);
    assert.ok(paths['/oauth/userinfo'].get && paths['/oauth/userinfo'].post);
    assert.ok(paths['/oauth/authorize'].get);
    assert.ok(paths['/.well-known/oauth-authorization-server'].get);
    assert.equal(paths['/login'], undefined, 'web pages are not API');
  });
});
