import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember } from '../helpers/fixtures.ts';
import { createClient, obtainCode, tokenRequest } from '../helpers/oauth.ts';

describe('OAuth secrets at rest', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ listen: true });
  });
  after(() => t.close());

  test('client secrets, codes, access and refresh tokens exist in the database only as SHA-256 hashes', async () => {
    const client = await createClient(t.db.pool);
    const member = await createMember(t.db.pool);
    const { code, verifier } = await obtainCode(t.url, { client, member });
    const first = (
      await tokenRequest(t.app, {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier!,
        redirect_uri: client.redirect_uris[0]!,
        client_id: client.client_id,
        client_secret: client.client_secret,
      })
    ).json();
    const second = (
      await tokenRequest(t.app, {
        grant_type: 'refresh_token',
        refresh_token: first.refresh_token,
        client_id: client.client_id,
        client_secret: client.client_secret,
      })
    ).json();

    const secrets = [client.client_secret, code, first.access_token, first.refresh_token, second.access_token, second.refresh_token];
    const tables = ['oauth_clients', 'oauth_grants', 'oauth_authorization_codes', 'oauth_access_tokens', 'oauth_refresh_tokens'];
    for (const table of tables) {
      const { rows } = await t.db.pool.query(`SELECT * FROM ${table}`);
      assert.ok(rows.length > 0, `${table} has rows`);
      const dump = JSON.stringify(rows, (_key, value) => (value?.type === 'Buffer' ? Buffer.from(value.data).toString('latin1') : value));
      for (const secret of secrets) {
        assert.ok(!dump.includes(secret.slice(4, 20)), `${table} must not contain ${secret.slice(0, 3)}_…`);
      }
    }
    for (const [table, column] of [
      ['oauth_clients', 'secret_hash'],
      ['oauth_authorization_codes', 'code_hash'],
      ['oauth_access_tokens', 'token_hash'],
      ['oauth_refresh_tokens', 'token_hash'],
    ] as const) {
      const { rows } = await t.db.pool.query(`SELECT ${column} AS hash FROM ${table}`);
      assert.ok(
        rows.every((row) => Buffer.isBuffer(row.hash) && row.hash.length === 32),
        `${table}.${column} is a 32-byte digest`,
      );
    }
    const logs = t.logs.join('');
    for (const secret of secrets) assert.ok(!logs.includes(secret.slice(4)), 'never logged either');
  });
});
