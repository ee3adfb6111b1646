// The production build, as `npm start` runs it: two `switchboard serve`
// processes from a copy of the checkout that holds the compiled dist/ but no
// TypeScript sources, on one database. A revocation, a deactivation or a
// secret rotation made through one process is refused by that process's next
// request, and by the other's (or after the CLI made it, by both) as soon as
// the cache notification arrives. This file runs beside the rest of the suite,
// so it allows a loaded machine a second; the 100 ms bound is
// asserted by test/cache/two-processes.serial.test.ts, which runs alone.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { baseEnv, cliJson, startServe, type Served } from '../helpers/cli.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createMember } from '../helpers/fixtures.ts';
import { createClient, issueTokens, platformHeaders } from '../helpers/oauth.ts';

/** Polls `status` until it answers `expected`, for at most a second (see above). */
async function soon(expected: number, status: () => Promise<number>): Promise<number> {
  const start = performance.now();
  for (;;) {
    const got = await status();
    if (got === expected || performance.now() - start > 1000) return got;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('the compiled server: two serve processes on one database', () => {
  let db: TestDatabase;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const servers: Served[] = [];

  before(async () => {
    db = await createTestDatabase();
    dir = await mkdtemp(path.join(os.tmpdir(), 'switchboard-compiled-'));
    for (const part of ['bin', 'dist', 'migrations', 'package.json'])
      await cp(path.join(ROOT, part), path.join(dir, part), { recursive: true });
    await symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
    env = baseEnv({ DATABASE_URL: db.url, PORT: '0', SECRET_KEY: randomBytes(32).toString('base64') });
    const bin = path.join(dir, 'bin/switchboard.js');
    servers.push(await startServe(env, ['--no-worker'], bin), await startServe(env, ['--no-worker'], bin));
  });
  after(async () => {
    for (const served of servers) {
      served.child.kill('SIGTERM');
      await served.exited;
    }
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  });

  test('serves from dist/ alone: no sources, ready, the OpenAPI document from package.json', async () => {
    assert.equal(existsSync(path.join(dir, 'src')), false);
    for (const served of servers) {
      assert.equal((await fetch(`${served.url}/readyz`)).status, 200);
      const openapi = (await (await fetch(`${served.url}/openapi.json`)).json()) as { info: { version: string } };
      assert.match(openapi.info.version, /^\d+\.\d+\.\d+/);
    }
  });

  test('revocation, deactivation and secret rotation through one process are refused by it at once, by the other soon after', async () => {
    const [a, b] = servers as [Served, Served];
    const member = await createMember(db.pool);
    const client = await createClient(db.pool, { name: 'Two Processes' });
    const connect = async () =>
      platformHeaders(await issueTokens(db.pool, { client, userId: member.user.id, organizationId: member.org.id }), client);
    const recent = (served: Served, headers: Record<string, string>) =>
      fetch(`${served.url}/calls/recent`, { headers }).then((r) => r.status);
    const basic = `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`;

    // RFC 7009 revocation of the access token at A.
    const first = await connect();
    assert.deepEqual([await recent(a, first), await recent(b, first)], [200, 200]);
    const revoked = await fetch(`${a.url}/oauth/revoke`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${encodeURIComponent(first.authorization!.slice('Bearer '.length))}`,
    });
    assert.equal(revoked.status, 200);
    assert.deepEqual([await recent(a, first), await soon(401, () => recent(b, first))], [401, 401]);

    // The client's secret rotated (CLI): the old secret is refused everywhere, the new one works.
    const second = await connect();
    assert.equal(await recent(b, second), 200);
    const rotated = await cliJson<{ client_secret: string }>(['client', 'rotate-secret', client.client_id], env);
    assert.deepEqual([await soon(401, () => recent(b, second)), await soon(401, () => recent(a, second))], [401, 401]);
    const withNewSecret = { ...second, 'x-client-secret': rotated.client_secret };
    assert.deepEqual([await recent(a, withNewSecret), await recent(b, withNewSecret)], [200, 200]);

    // Signing out at A ends the x-user-token at B; deactivating the user (CLI) ends its OAuth access.
    const locations = (served: Served) =>
      fetch(`${served.url}/locations`, { headers: { 'x-user-token': member.token } }).then((r) => r.status);
    assert.equal(await locations(b), 200);
    assert.equal((await fetch(`${a.url}/auth/session`, { method: 'DELETE', headers: { 'x-user-token': member.token } })).status, 204);
    assert.equal(await locations(a), 401);
    assert.equal(await soon(401, () => locations(b)), 401);
    await cliJson(['user', 'deactivate', '--email', member.email], env);
    assert.deepEqual([await soon(401, () => recent(b, withNewSecret)), await soon(401, () => recent(a, withNewSecret))], [401, 401]);
  });
});
