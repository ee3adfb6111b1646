import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Queryable } from '../../src/db/pool.ts';
import { withOrg } from '../../src/db/with-org.ts';
import { deleteAttemptHoursBefore } from '../../src/webhooks/delivery-health.queries.ts';
import { createMember, createOrg } from '../helpers/fixtures.ts';
import { createTestDatabase, reachWithoutOrganization, type TestDatabase } from '../helpers/db.ts';
import { createClient } from '../helpers/oauth.ts';

/**
 * Tables with an organization_id column that are not tenant data: a session
 * records the organization it acts in, and is read before any organization is
 * known (docs/security.md, finding 4 of the first review).
 */
const NOT_TENANT_TABLES = ['user_sessions'];

describe('row-level security on tenant tables', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(() => db.drop());

  test('withOrg sees only the rows of its organization', async () => {
    const a = await createMember(db.pool);
    const b = await createMember(db.pool);
    const seen = await withOrg(db.pool, a.org.id, async (client) => (await client.query('SELECT organization_id FROM memberships')).rows);
    assert.equal(seen.length, 1);
    assert.equal(seen[0].organization_id, a.org.id);
    const seenB = await withOrg(db.pool, b.org.id, async (client) => (await client.query('SELECT user_id FROM memberships')).rows);
    assert.deepEqual(
      seenB.map((r) => r.user_id),
      [b.user.id],
    );
  });

  test('without the organization setting a tenant query returns zero rows', async () => {
    await createMember(db.pool);
    assert.deepEqual(await reachWithoutOrganization(db.pool, 'memberships', 'role'), [0, 0, 0]);
  });

  test('the setting does not outlive its transaction on a pooled connection', async () => {
    const a = await createMember(db.pool);
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL ROLE switchboard_app');
      await client.query(`SELECT set_config('app.organization_id', $1, true)`, [a.org.id]);
      assert.equal((await client.query('SELECT * FROM memberships')).rows.length, 1);
      await client.query('COMMIT');
      await client.query('BEGIN');
      await client.query('SET LOCAL ROLE switchboard_app');
      assert.equal((await client.query('SELECT * FROM memberships')).rows.length, 0);
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  });

  test('inserting a row for another organization fails', async () => {
    const a = await createMember(db.pool);
    const other = await createOrg(db.pool);
    await assert.rejects(
      withOrg(db.pool, a.org.id, (client) =>
        client.query(`INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, 'member')`, [other.id, a.user.id]),
      ),
      /row-level security/,
    );
    const { rows } = await db.pool.query('SELECT 1 FROM memberships WHERE organization_id = $1', [other.id]);
    assert.equal(rows.length, 0);
  });

  test('the application role cannot switch off row-level security', async () => {
    const a = await createMember(db.pool);
    await assert.rejects(
      withOrg(db.pool, a.org.id, (client) =>
        client.query('SET LOCAL row_security = off').then(() => client.query('SELECT * FROM memberships')),
      ),
      /row-level security/,
    );
  });

  /** What the catalog says of every table with an organization_id column, as `db` sees it. */
  async function tenantTableSecurity(db: Queryable) {
    const { rows } = await db.query<{
      table: string;
      enabled: boolean;
      forced: boolean;
      tenant_policy: boolean;
      owner_policy: boolean;
    }>(
      `SELECT c.relname AS table, c.relrowsecurity AS enabled, c.relforcerowsecurity AS forced,
              EXISTS (SELECT 1 FROM pg_policy p
                       WHERE p.polrelid = c.oid AND p.polpermissive AND p.polroles = '{0}'
                         AND pg_get_expr(p.polqual, p.polrelid) = '(organization_id = app_current_org())'
                         AND pg_get_expr(p.polwithcheck, p.polrelid) = '(organization_id = app_current_org())') AS tenant_policy,
              EXISTS (SELECT 1 FROM pg_policy p
                       WHERE p.polrelid = c.oid AND p.polpermissive AND c.relowner = ANY (p.polroles)
                         AND pg_get_expr(p.polqual, p.polrelid) = 'true') AS owner_policy
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
          AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'organization_id' AND NOT a.attisdropped)
        ORDER BY c.relname`,
    );
    return rows;
  }
  /** The tenant tables (all but NOT_TENANT_TABLES) that do not force row-level security under both policies. */
  const unsecured = (rows: Awaited<ReturnType<typeof tenantTableSecurity>>) =>
    rows
      .filter((r) => !NOT_TENANT_TABLES.includes(r.table))
      .filter((r) => !(r.enabled && r.forced && r.tenant_policy && r.owner_policy))
      .map((r) => r.table);

  test('every tenant table (an organization_id column, read from the catalog) forces row-level security under the tenant policy, its owner reaching rows through a policy of its own', async () => {
    const rows = await tenantTableSecurity(db.pool);
    const tenant = rows.filter((r) => !NOT_TENANT_TABLES.includes(r.table));
    assert.deepEqual(
      rows.filter((r) => NOT_TENANT_TABLES.includes(r.table)).map((r) => r.table),
      NOT_TENANT_TABLES,
      'the exceptions exist',
    );
    for (const known of ['calls', 'memberships', 'calls_per_day', 'webhook_attempts_per_hour']) {
      assert.ok(
        tenant.some((r) => r.table === known),
        `${known} is found`,
      );
    }
    assert.deepEqual(unsecured(rows), []);
  });

  test('the check finds a tenant table no list names: a new table with organization_id fails it until it is secured', async () => {
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('CREATE TABLE rls_probe (id int PRIMARY KEY, organization_id uuid NOT NULL)');
      assert.deepEqual(unsecured(await tenantTableSecurity(client)), ['rls_probe']);
      await client.query('ALTER TABLE rls_probe ENABLE ROW LEVEL SECURITY');
      await client.query('ALTER TABLE rls_probe FORCE ROW LEVEL SECURITY');
      await client.query(
        'CREATE POLICY rls_probe_tenant ON rls_probe USING (organization_id = app_current_org()) WITH CHECK (organization_id = app_current_org())',
      );
      assert.deepEqual(
        unsecured(await tenantTableSecurity(client)),
        ['rls_probe'],
        'forced with the tenant policy, its owner has no policy yet',
      );
      await client.query('CREATE POLICY rls_probe_owner ON rls_probe TO CURRENT_USER USING (true) WITH CHECK (true)');
      assert.deepEqual(unsecured(await tenantTableSecurity(client)), []);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  test('a sealed rollup binds its owner too: rows come from the owner policy, which retention relies on', async () => {
    const member = await createMember(db.pool);
    const client = await createClient(db.pool, { name: 'Rollup platform' });
    const {
      rows: [hook],
    } = await db.pool.query<{ id: string }>(
      `INSERT INTO webhook_subscriptions (organization_id, client_id, event, callback_url, status, disabled_at)
       VALUES ($1, $2, 'call.completed', 'https://example.com/hook', 'disabled', now()) RETURNING id`,
      [member.org.id, client.client_id],
    );
    await db.pool.query(
      `INSERT INTO webhook_attempts_per_hour (organization_id, subscription_id, hour, succeeded, retrying, failed)
       VALUES ($1, $2, date_trunc('hour', now()) - interval '40 days', 1, 0, 0), ($1, $2, date_trunc('hour', now()) - interval '2 hours', 1, 0, 0)`,
      [member.org.id, hook!.id],
    );
    await db.pool.query('INSERT INTO calls_per_day (organization_id, day, calls) VALUES ($1, current_date - 2, 3)', [member.org.id]);

    // The tests connect as a superuser, whom row-level security never binds:
    // the rollups are handed to an ordinary owner for one rolled-back transaction.
    const owner = `sbt_rollup_owner_${randomBytes(4).toString('hex')}`;
    const connection = await db.pool.connect();
    try {
      await connection.query('BEGIN');
      await connection.query(`CREATE ROLE ${owner} NOSUPERUSER NOBYPASSRLS`);
      for (const table of ['calls_per_day', 'webhook_attempts_per_hour']) {
        await connection.query(`ALTER TABLE ${table} OWNER TO ${owner}`);
        await connection.query(`ALTER POLICY ${table}_owner ON ${table} TO ${owner}`);
      }
      await connection.query(`SET LOCAL ROLE ${owner}`);
      assert.equal(await deleteAttemptHoursBefore(connection, new Date(Date.now() - 30 * 86_400_000)), 1, 'retention removes the old hour');
      assert.equal((await connection.query('SELECT count(*)::int AS n FROM calls_per_day')).rows[0].n, 1);
      await connection.query('RESET ROLE');
      await connection.query('DROP POLICY calls_per_day_owner ON calls_per_day');
      await connection.query(`SET LOCAL ROLE ${owner}`);
      assert.equal(
        (await connection.query('SELECT count(*)::int AS n FROM calls_per_day')).rows[0].n,
        0,
        'forced: without its policy the owner sees nothing',
      );
    } finally {
      await connection.query('ROLLBACK');
      connection.release();
    }
    const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM webhook_attempts_per_hour WHERE subscription_id = $1', [hook!.id]);
    assert.equal(rows[0].n, 2, 'rolled back');
  });

  test('withOrg refuses anything but an organization UUID (it is inlined into the opening statement)', async () => {
    await assert.rejects(
      withOrg(db.pool, "x'); DROP TABLE memberships; --", async () => 1),
      /not an organization id/,
    );
    const { rows } = await db.pool.query(`SELECT to_regclass('memberships') IS NOT NULL AS present`);
    assert.equal(rows[0].present, true);
  });
});
