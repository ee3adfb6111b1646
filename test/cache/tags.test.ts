// The tags migrations 0012 and 0024 send on the switchboard_cache channel are
// the tags the process caches file their entries under (src/cache/tags.ts):
// each trigger is fired on a real database, and what arrives on a LISTEN
// connection must be exactly what the builders make. A tag spelled one way in
// SQL and another in TypeScript would leave entries no notification reaches.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { CACHE_CHANNEL } from '../../src/cache/cache-listener.ts';
import { tags, type CacheName, type Tag } from '../../src/cache/tags.ts';
import { withOrg } from '../../src/db/with-org.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createMember, type Member } from '../helpers/fixtures.ts';
import { createClient, issueTokens } from '../helpers/oauth.ts';

describe('cache tags: every trigger sends what the builders make', () => {
  let db: TestDatabase;
  let listener: pg.Client;
  const received: string[] = [];

  before(async () => {
    db = await createTestDatabase();
    listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    listener.on('notification', (message) => {
      if (message.channel === CACHE_CHANNEL) received.push(message.payload ?? '');
    });
    await listener.query(`LISTEN ${CACHE_CHANNEL}`);
  });
  after(async () => {
    await listener.end();
    await db.drop();
  });

  /** Waits until `marker` arrives: PostgreSQL delivers notifications in commit order, so every earlier one has too. */
  async function markerArrived(marker: string): Promise<number> {
    await db.pool.query('SELECT pg_notify($1, $2)', [CACHE_CHANNEL, marker]);
    const deadline = Date.now() + 10_000;
    for (;;) {
      const at = received.indexOf(marker);
      if (at >= 0) return at;
      assert.ok(Date.now() < deadline, 'the marker notification never arrived');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  /** The notifications `change` sends, each as it arrived (one payload, comma-separated tags), in sorted order. */
  async function sentBy(change: () => Promise<unknown>): Promise<string[]> {
    const from = await markerArrived(`before:${randomBytes(6).toString('hex')}`);
    await change();
    const to = await markerArrived(`after:${randomBytes(6).toString('hex')}`);
    return received.slice(from + 1, to).sort();
  }

  /** One notification per tag list, as the builders join them. */
  const notifications = (...lists: Tag[][]) => lists.map((list) => list.join(',')).sort();

  const query =
    (sql: string, values: unknown[] = []) =>
    () =>
      db.pool.query(sql, values);
  const inOrg =
    (member: Member, sql: string, values: unknown[] = []) =>
    () =>
      withOrg(db.pool, member.org.id, (client) => client.query(sql, values));

  async function platform() {
    const member = await createMember(db.pool);
    const client = await createClient(db.pool, { name: 'Tagged platform' });
    const tokens = await issueTokens(db.pool, { client, userId: member.user.id, organizationId: member.org.id });
    return { member, client, grantId: tokens.grant_id };
  }
  async function sessionOf(member: Member): Promise<string> {
    const { rows } = await db.pool.query<{ id: string }>('SELECT id FROM user_sessions WHERE user_id = $1', [member.user.id]);
    assert.equal(rows.length, 1);
    return rows[0]!.id;
  }
  async function bareUser(): Promise<string> {
    const { rows } = await db.pool.query<{ id: string }>(`INSERT INTO users (email, password_hash) VALUES ($1, 'x') RETURNING id`, [
      `bare-${randomBytes(4).toString('hex')}@example.com`,
    ]);
    return rows[0]!.id;
  }

  test('access tokens: revoked or deleted while unexpired send their grant; an expired one sends nothing', async () => {
    const { grantId } = await platform();
    assert.deepEqual(
      await sentBy(query('UPDATE oauth_access_tokens SET revoked_at = now() WHERE grant_id = $1', [grantId])),
      notifications([tags.grant(grantId)]),
    );
    const other = await platform();
    assert.deepEqual(
      await sentBy(query('DELETE FROM oauth_access_tokens WHERE grant_id = $1', [other.grantId])),
      notifications([tags.grant(other.grantId)]),
    );
    const expired = await platform();
    await db.pool.query(`UPDATE oauth_access_tokens SET expires_at = now() - interval '1 second' WHERE grant_id = $1`, [expired.grantId]);
    assert.deepEqual(await sentBy(query('DELETE FROM oauth_access_tokens WHERE grant_id = $1', [expired.grantId])), []);
  });

  test('grants: updated or deleted send the grant', async () => {
    const { grantId } = await platform();
    assert.deepEqual(
      await sentBy(query('UPDATE oauth_grants SET revoked_at = now() WHERE id = $1', [grantId])),
      notifications([tags.grant(grantId)]),
    );
    // Its access tokens go with it (ON DELETE CASCADE) and send the same tag: one notification per transaction.
    const other = await platform();
    assert.deepEqual(
      await sentBy(query('DELETE FROM oauth_grants WHERE id = $1', [other.grantId])),
      notifications([tags.grant(other.grantId)]),
    );
  });

  test('clients: a rotated secret or a deletion sends the client (and, deleted, its grants)', async () => {
    const { client, grantId } = await platform();
    assert.deepEqual(
      await sentBy(query(`UPDATE oauth_clients SET secret_hash = sha256('rotated') WHERE client_id = $1`, [client.client_id])),
      notifications([tags.client(client.client_id)]),
    );
    assert.deepEqual(
      await sentBy(query('DELETE FROM oauth_clients WHERE client_id = $1', [client.client_id])),
      notifications([tags.client(client.client_id)], [tags.grant(grantId)]),
    );
  });

  test('users, memberships, organizations: updated or deleted send the user or the organization', async () => {
    const userId = await bareUser();
    assert.deepEqual(await sentBy(query('UPDATE users SET active = false WHERE id = $1', [userId])), notifications([tags.user(userId)]));
    assert.deepEqual(await sentBy(query('DELETE FROM users WHERE id = $1', [userId])), notifications([tags.user(userId)]));

    const member = await createMember(db.pool);
    const membership = 'FROM memberships WHERE user_id = $1 AND organization_id = $2';
    assert.deepEqual(
      await sentBy(
        query(`UPDATE memberships SET role = 'admin' WHERE user_id = $1 AND organization_id = $2`, [member.user.id, member.org.id]),
      ),
      notifications([tags.user(member.user.id)]),
    );
    assert.deepEqual(
      await sentBy(query(`DELETE ${membership}`, [member.user.id, member.org.id])),
      notifications([tags.user(member.user.id)]),
    );

    assert.deepEqual(
      await sentBy(query('UPDATE organizations SET active = false WHERE id = $1', [member.org.id])),
      notifications([tags.org(member.org.id)]),
    );
    const { rows } = await db.pool.query<{ id: string }>(`INSERT INTO organizations (name) VALUES ('Bare') RETURNING id`);
    assert.deepEqual(await sentBy(query('DELETE FROM organizations WHERE id = $1', [rows[0]!.id])), notifications([tags.org(rows[0]!.id)]));
  });

  test('sessions: moved or signed out while unexpired send the session; an expired one sends nothing', async () => {
    const member = await createMember(db.pool);
    const sessionId = await sessionOf(member);
    assert.deepEqual(
      await sentBy(query('UPDATE user_sessions SET organization_id = organization_id WHERE id = $1', [sessionId])),
      notifications([tags.session(sessionId)]),
    );
    assert.deepEqual(await sentBy(query('DELETE FROM user_sessions WHERE id = $1', [sessionId])), notifications([tags.session(sessionId)]));
    const expired = await createMember(db.pool);
    await db.pool.query(`UPDATE user_sessions SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [expired.user.id]);
    assert.deepEqual(await sentBy(query('DELETE FROM user_sessions WHERE user_id = $1', [expired.user.id])), []);
  });

  test("calls: a completed call inserted, completed or deleted sends the organization's calls; one in progress sends nothing", async () => {
    const member = await createMember(db.pool);
    const calls = notifications([tags.calls(member.org.id)]);
    assert.deepEqual(await sentBy(inOrg(member, `INSERT INTO calls (organization_id) VALUES ($1)`, [member.org.id])), []);
    assert.deepEqual(
      await sentBy(inOrg(member, `UPDATE calls SET status = 'completed', completed_at = now(), summary = 'Done', duration_seconds = 3`)),
      calls,
    );
    assert.deepEqual(
      await sentBy(
        inOrg(
          member,
          `INSERT INTO calls (organization_id, status, completed_at, summary, duration_seconds) VALUES ($1, 'completed', now(), 'Booked', 5)`,
          [member.org.id],
        ),
      ),
      calls,
    );
    // Calls are never deleted by the application role: as the owner, as an operator would.
    assert.deepEqual(await sentBy(query('DELETE FROM calls WHERE organization_id = $1', [member.org.id])), calls);
  });

  test("locations: inserted, updated or deleted send the organization's locations", async () => {
    const member = await createMember(db.pool);
    const locations = notifications([tags.locations(member.org.id)]);
    assert.deepEqual(
      await sentBy(inOrg(member, `INSERT INTO locations (organization_id, name) VALUES ($1, 'Depot')`, [member.org.id])),
      locations,
    );
    assert.deepEqual(await sentBy(inOrg(member, `UPDATE locations SET city = 'Springfield'`)), locations);
    assert.deepEqual(await sentBy(inOrg(member, 'DELETE FROM locations')), locations);
  });

  test('a statement that touches more than 100 things sends everything', async () => {
    const { rows } = await db.pool.query<{ id: string }>(
      `INSERT INTO users (email, password_hash) SELECT 'many-' || n || '-' || $1 || '@example.com', 'x' FROM generate_series(1, 101) n RETURNING id`,
      [randomBytes(4).toString('hex')],
    );
    assert.deepEqual(await sentBy(query('UPDATE users SET name = $2 WHERE id = ANY($1)', [rows.map((row) => row.id), 'Many'])), [
      tags.everything,
    ]);
  });

  // Last: TRUNCATE empties the tables the tests above use.
  test('TRUNCATE sends one flush:<cache> per cache that may hold entries resting on the table', async () => {
    const flushes = (...names: CacheName[]) => names.map((name) => tags.cache(name)).join(',');
    // Migration 0024's triggers, table by table.
    const expected: Record<string, string> = {
      oauth_access_tokens: flushes('access_tokens'),
      oauth_grants: flushes('access_tokens'),
      oauth_clients: flushes('clients', 'access_tokens'),
      users: flushes('access_tokens', 'sessions'),
      memberships: flushes('access_tokens', 'sessions'),
      organizations: flushes('access_tokens', 'sessions', 'reads'),
      user_sessions: flushes('sessions'),
      calls: flushes('reads'),
      locations: flushes('reads'),
    };
    for (const [table, payload] of Object.entries(expected)) {
      // CASCADE truncates the tables that reference this one too, and their triggers send their own.
      const sent = await sentBy(query(`TRUNCATE ${table} CASCADE`));
      assert.ok(sent.includes(payload), `TRUNCATE ${table}: ${payload} among ${sent.join(' | ')}`);
      for (const each of sent) assert.ok(Object.values(expected).includes(each), `TRUNCATE ${table} sent ${each}`);
    }
  });
});
