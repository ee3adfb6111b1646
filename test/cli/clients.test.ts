import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

const exec = promisify(execFile);

describe('switchboard client create|list|rotate-secret|delete', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(() => db.drop());

  async function cli(...args: string[]) {
    try {
      const { stdout, stderr } = await exec(process.execPath, ['bin/switchboard.js', ...args], {
        env: { ...process.env, DATABASE_URL: db.url, LOG_LEVEL: 'silent' },
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    }
  }

  test('the whole lifecycle prints exactly the JSON of docs/interface.md §16', async () => {
    const created = await cli(
      'client',
      'create',
      '--name',
      'Zapier',
      '--redirect-uri',
      'https://zapier.example/cb',
      '--redirect-uri',
      'http://localhost:8080/cb',
      '--scopes',
      'calls:read calls:write',
      '--json',
    );
    assert.equal(created.code, 0, created.stderr);
    const client = JSON.parse(created.stdout);
    assert.deepEqual(Object.keys(client).sort(), ['client_id', 'client_secret', 'redirect_uris', 'scopes']);
    assert.match(client.client_id, /^[0-9a-f]{32}$/);
    assert.match(client.client_secret, /^sbs_[\w-]{43}$/);
    assert.deepEqual(client.redirect_uris, ['https://zapier.example/cb', 'http://localhost:8080/cb']);
    assert.deepEqual(client.scopes, ['calls:read', 'calls:write']);

    const { rows } = await db.pool.query('SELECT * FROM oauth_clients');
    assert.ok(!JSON.stringify(rows).includes(client.client_secret.slice(4)), 'the secret is stored only as a hash');

    const listed = JSON.parse((await cli('client', 'list', '--json')).stdout);
    assert.deepEqual(Object.keys(listed), ['clients']);
    assert.equal(listed.clients.length, 1);
    assert.equal(listed.clients[0].client_id, client.client_id);
    assert.equal(listed.clients[0].name, 'Zapier');
    assert.equal(listed.clients[0].client_secret, undefined);

    const rotated = JSON.parse((await cli('client', 'rotate-secret', client.client_id, '--json')).stdout);
    assert.deepEqual(Object.keys(rotated).sort(), ['client_id', 'client_secret']);
    assert.notEqual(rotated.client_secret, client.client_secret);

    const deleted = JSON.parse((await cli('client', 'delete', client.client_id, '--json')).stdout);
    assert.deepEqual(deleted, { client_id: client.client_id, deleted: true });
    const again = await cli('client', 'delete', client.client_id, '--json');
    assert.notEqual(again.code, 0);
    assert.equal(again.stdout, '');
    assert.match(again.stderr, /does not exist/);
  });

  test('bad input exits non-zero with one line naming the flag', async () => {
    const cases = [
      ['client', 'create', '--name', 'X', '--json'],
      ['client', 'create', '--name', 'X', '--redirect-uri', 'http://evil.example/cb', '--json'],
      ['client', 'create', '--name', 'X', '--redirect-uri', 'https://ok.example/cb#frag', '--json'],
      ['client', 'create', '--name', 'X', '--redirect-uri', 'https://ok.example/cb', '--scopes', 'calls:read admin', '--json'],
    ];
    for (const args of cases) {
      const result = await cli(...args);
      assert.notEqual(result.code, 0, args.join(' '));
      assert.equal(result.stdout, '');
      assert.match(result.stderr, /^switchboard: --(redirect-uri|scopes)[^\n]*\n$/);
    }
  });

  test('a redirect URI with a control character, a space or a non-ASCII character exits 2 naming the flag; nothing is stored', async () => {
    // new URL() drops CR, LF and TAB: checked on the string as given, which is what would be stored.
    const uris = [
      'https://ok.example/cb\r\nx',
      'https://ok.example/cb\tx',
      'https://ok.example/c b',
      'https://ök.example/cb',
      'https://ok.example/\u007f',
    ];
    for (const uri of uris) {
      const result = await cli('client', 'create', '--name', 'X', '--redirect-uri', uri, '--json');
      assert.equal(result.code, 2, JSON.stringify(uri));
      assert.equal(result.stdout, '');
      assert.match(
        result.stderr,
        /^switchboard: --redirect-uri "[^"\r\n\t]*" must not contain (a control character|a space|a non-ASCII character) \(U\+[0-9A-F]{4} at position \d+\); percent-encode it\n$/,
      );
    }
    const { rows } = await db.pool.query("SELECT 1 FROM oauth_clients WHERE name = 'X'");
    assert.equal(rows.length, 0);
    assert.equal((await cli('client', 'create', '--name', 'X', '--redirect-uri', 'https://ok.example/c%20b%0D', '--json')).code, 0);
  });
});
