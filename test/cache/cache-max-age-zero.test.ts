// CACHE_MAX_AGE=0 turns the process caches off (docs/configuration.md):
// every request asks PostgreSQL. Two real `serve` processes on one database,
// one with the caches on (the control) and one with CACHE_MAX_AGE=0; a
// session expired in SQL with triggers off (no notification reaches any
// cache) is still accepted by the control, from its cache, and refused at
// once by the process that caches nothing.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { baseEnv, startServe, type Served } from '../helpers/cli.ts';
import { commitUnannounced, createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createMember } from '../helpers/fixtures.ts';

describe('CACHE_MAX_AGE=0', () => {
  let db: TestDatabase;
  let cached: Served;
  let uncached: Served;
  before(async () => {
    db = await createTestDatabase();
    const env = baseEnv({ DATABASE_URL: db.url, PORT: '0', SECRET_KEY: randomBytes(32).toString('base64'), LOG_LEVEL: 'warn' });
    cached = await startServe({ ...env, CACHE_MAX_AGE: '300' }, ['--no-worker']);
    uncached = await startServe({ ...env, CACHE_MAX_AGE: '0' }, ['--no-worker']);
  });
  after(async () => {
    for (const served of [cached, uncached]) {
      served?.child.kill('SIGTERM');
      await served?.exited;
    }
    await db.drop();
  });

  const locations = (served: Served, token: string) => fetch(`${served.url}/locations`, { headers: { 'x-user-token': token } });

  test('a serve process answers every request from PostgreSQL: a change no notification announces is seen at once', async () => {
    const member = await createMember(db.pool);
    for (const served of [cached, uncached]) assert.equal((await locations(served, member.token)).status, 200);
    const expire = "UPDATE user_sessions SET expires_at = now() - interval '1 minute' WHERE token_hash = sha256(convert_to($1, 'UTF8'))";
    await commitUnannounced(db.pool, expire, [member.token]);
    assert.equal((await locations(cached, member.token)).status, 200, 'the control answers from its cache');
    assert.equal((await locations(uncached, member.token)).status, 401, 'CACHE_MAX_AGE=0 asks PostgreSQL');
  });
});
