import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';

describe('GET /.well-known/oauth-authorization-server (RFC 8414)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ env: { BASE_URL: 'https://switchboard.example' } });
  });
  after(() => t.close());

  test('issuer is BASE_URL and the endpoints hang off it', async () => {
    const res = await t.app.inject({ url: '/.well-known/oauth-authorization-server' });
    assert.equal(res.statusCode, 200);
    const metadata = res.json();
    assert.equal(metadata.issuer, 'https://switchboard.example');
    assert.equal(metadata.authorization_endpoint, 'https://switchboard.example/oauth/authorize');
    assert.equal(metadata.token_endpoint, 'https://switchboard.example/oauth/token');
    assert.equal(metadata.userinfo_endpoint, 'https://switchboard.example/oauth/userinfo');
    assert.equal(metadata.revocation_endpoint, 'https://switchboard.example/oauth/revoke');
    assert.deepEqual(metadata.code_challenge_methods_supported, ['S256']);
    assert.equal(metadata.authorization_response_iss_parameter_supported, true);
    assert.deepEqual(metadata.response_types_supported, ['code']);
    assert.deepEqual(metadata.grant_types_supported, ['authorization_code', 'refresh_token']);
    assert.deepEqual(metadata.token_endpoint_auth_methods_supported, ['client_secret_basic', 'client_secret_post', 'none']);
    assert.equal(metadata.registration_endpoint, 'https://switchboard.example/oauth/register');
    assert.equal(metadata.client_id_metadata_document_supported, true);
    assert.deepEqual(metadata.scopes_supported, [
      'calls:read',
      'calls:write',
      'contacts:read',
      'contacts:write',
      'leads:read',
      'leads:write',
      'audiences:write',
      'locations:read',
      'locations:write',
    ]);
  });
});
