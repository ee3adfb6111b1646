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

  test('the MCP routes: protected resource metadata (RFC 9728), dynamic registration (RFC 7591) and /mcp', async () => {
    const paths = (await t.app.inject({ url: '/openapi.json' })).json().paths;
    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      assert.deepEqual(Object.keys(paths[path].get.responses['200'].content['application/json'].schema.properties).sort(), [
        'authorization_servers',
        'bearer_methods_supported',
        'resource',
        'resource_documentation',
        'resource_name',
        'scopes_supported',
      ]);
    }
    const register = paths['/oauth/register'].post;
    assert.ok(register.requestBody.content['application/json'].schema.properties.redirect_uris);
    assert.ok(register.responses['201'] && register.responses['400']);
    assert.ok(paths['/mcp'].post);
  });
});
