// DATABASE_APP_URL (docs/configuration.md): the connection request work
// uses, as the login role switchboard_request, used as it is. The URL given
// here is the role's own with an application_name no derived URL carries, so
// PostgreSQL's list of connections shows which URL each pool was opened with.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { requestRoleUrl } from '../../src/db/request-pool.ts';
import { baseEnv, startServe, type Served } from '../helpers/cli.ts';
import { adminQuery, createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createMember } from '../helpers/fixtures.ts';

const APPLICATION_NAME = 'switchboard-app-url-test';

describe('DATABASE_APP_URL', () => {
  let db: TestDatabase;
  let served: Served;
  before(async () => {
    db = await createTestDatabase();
    const appUrl = new URL(requestRoleUrl(db.url));
    appUrl.searchParams.set('application_name', APPLICATION_NAME);
    served = await startServe(
      baseEnv({
        DATABASE_URL: db.url,
        DATABASE_APP_URL: appUrl.toString(),
        PORT: '0',
        SECRET_KEY: randomBytes(32).toString('base64'),
        LOG_LEVEL: 'warn',
        // Every request reaches PostgreSQL.
        CACHE_MAX_AGE: '0',
      }),
      ['--no-worker'],
    );
  });
  after(async () => {
    served?.child.kill('SIGTERM');
    await served?.exited;
    await db.drop();
  });

  test("requests run on connections opened with DATABASE_APP_URL as given, as switchboard_request, bound by the organization's rows", async () => {
    const member = await createMember(db.pool);
    const other = await createMember(db.pool);
    const headers = { 'x-user-token': member.token };
    const created = await fetch(`${served.url}/locations`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Depot', latitude: 10, longitude: 20 }),
    });
    assert.equal(created.status, 201, await created.text());
    const listed = (await (await fetch(`${served.url}/locations`, { headers })).json()) as { name: string }[];
    assert.deepEqual(
      listed.map((l) => l.name),
      ['Depot'],
    );
    const elsewhere = (await (await fetch(`${served.url}/locations`, { headers: { 'x-user-token': other.token } })).json()) as unknown[];
    assert.deepEqual(elsewhere, [], "another organization's user sees none of it");

    const { rows } = await adminQuery(
      `SELECT usename AS role, application_name AS name, count(*)::int AS n FROM pg_stat_activity
        WHERE datname = $1 AND usename = 'switchboard_request' GROUP BY 1, 2`,
      [db.name],
    );
    assert.ok(rows.length > 0, 'the request pool has connections');
    assert.deepEqual(
      rows.map((r) => r.name),
      [APPLICATION_NAME],
      'every switchboard_request connection was opened with DATABASE_APP_URL',
    );
  });
});
