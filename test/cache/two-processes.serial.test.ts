// The process caches (src/cache) on two real `switchboard serve` processes
// sharing one database: whatever ends access or changes a cached read, made
// through one process, through the CLI or straight in PostgreSQL, reaches the
// other within 100 ms (a request begun that long after the change gets the new
// answer), and the process that made the change refuses on its
// very next request. Before each change the answer is shown to come from the
// caches: a change committed with triggers off (no notification) goes unseen.
// Losing the LISTEN connection turns the caches off: no stale answer while it
// is away. A serial test (it runs alone, scripts/test.ts): the bound is about
// notifications, not about a machine busy with a dozen other test files.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { baseEnv, cliJson, startServe, type Served } from '../helpers/cli.ts';
import { commitUnannounced, createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { createMember } from '../helpers/fixtures.ts';
import { createClient, issueTokens, platformHeaders } from '../helpers/oauth.ts';

const BOUND_MS = 100;

/**
 * Asks `check` again and again until it holds, and fails if a check begun more
 * than BOUND_MS after the call still finds the old answer. Measured from the
 * change (it has returned, so it is committed and notified) to when each check
 * began: a check's own round trip on a busy machine is not the caches' delay.
 * Returns how long after the call the first check that held began.
 */
async function within(what: string, check: () => Promise<boolean>): Promise<number> {
  const start = performance.now();
  for (;;) {
    const began = performance.now() - start;
    if (await check()) return began;
    assert.ok(
      began <= BOUND_MS,
      `${what}: a request begun ${began.toFixed(0)} ms after the change still had the old answer (bound ${BOUND_MS} ms)`,
    );
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

describe('process caches: two serve processes on one database', () => {
  let db: TestDatabase;
  let env: NodeJS.ProcessEnv;
  let a: Served;
  let b: Served;

  before(async () => {
    db = await createTestDatabase();
    env = baseEnv({ DATABASE_URL: db.url, PORT: '0', SECRET_KEY: randomBytes(32).toString('base64'), LOG_LEVEL: 'warn' });
    [a, b] = [await startServe(env, ['--no-worker']), await startServe(env, ['--no-worker'])];
  });
  after(async () => {
    for (const served of [a, b]) {
      served.child.kill('SIGTERM');
      await served.exited;
    }
    await db.drop();
  });

  const recent = (served: Served, headers: Record<string, string>, limit = 20) =>
    fetch(`${served.url}/calls/recent?limit=${limit}`, { headers });
  const recentStatus = (served: Served, headers: Record<string, string>) => recent(served, headers).then((r) => r.status);
  const locations = (served: Served, token: string) => fetch(`${served.url}/locations`, { headers: { 'x-user-token': token } });
  /** Runs `check` while `change` stands unannounced, then takes the change back (unannounced too). */
  async function whileUnannounced(change: [string, unknown[]], undo: [string, unknown[]], check: () => Promise<void>): Promise<void> {
    await commitUnannounced(db.pool, ...change);
    try {
      await check();
    } finally {
      await commitUnannounced(db.pool, ...undo);
    }
  }
  const setTokenRevoked = (token: string, at: Date | null): [string, unknown[]] => [
    "UPDATE oauth_access_tokens SET revoked_at = $2 WHERE token_hash = sha256(convert_to($1, 'UTF8'))",
    [token, at],
  ];
  /**
   * Used at each process, and shown to come from its cache from then on: with
   * the token revoked where no notification tells, both processes still accept it.
   */
  async function usedEverywhere(connection: { headers: Record<string, string>; tokens: { access_token: string } }): Promise<void> {
    for (const served of [a, b]) assert.equal(await recentStatus(served, connection.headers), 200);
    await whileUnannounced(
      setTokenRevoked(connection.tokens.access_token, new Date()),
      setTokenRevoked(connection.tokens.access_token, null),
      async () => {
        for (const served of [a, b])
          assert.equal(await recentStatus(served, connection.headers), 200, 'the token is served from the process cache');
      },
    );
  }
  async function connect(options: { client?: Awaited<ReturnType<typeof createClient>> } = {}) {
    const member = await createMember(db.pool);
    const client = options.client ?? (await createClient(db.pool, { name: 'Cached platform' }));
    const tokens = await issueTokens(db.pool, { client, userId: member.user.id, organizationId: member.org.id });
    return { member, client, tokens, headers: platformHeaders(tokens, client) };
  }

  test('a token revoked at A: refused by A on the next request, by B within 100 ms', async () => {
    const connection = await connect();
    const { client, tokens, headers } = connection;
    await usedEverywhere(connection);
    const revoked = await fetch(`${a.url}/oauth/revoke`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: `token=${encodeURIComponent(tokens.access_token)}`,
    });
    assert.equal(revoked.status, 200);
    assert.equal(await recentStatus(a, headers), 401);
    await within('revoked token at B', async () => (await recentStatus(b, headers)) === 401);
  });

  test('a deactivated user, a deactivated organization, a rotated secret, a deleted client: refused everywhere within 100 ms', async () => {
    const user = await connect();
    await usedEverywhere(user);
    await cliJson(['user', 'deactivate', '--email', user.member.email], env);
    for (const served of [a, b]) await within('deactivated user', async () => (await recentStatus(served, user.headers)) === 401);

    const org = await connect();
    await usedEverywhere(org);
    await db.pool.query('UPDATE organizations SET active = false WHERE id = $1', [org.member.org.id]);
    for (const served of [a, b]) await within('deactivated organization', async () => (await recentStatus(served, org.headers)) === 401);

    const rotated = await connect();
    await usedEverywhere(rotated);
    const { client_secret: newSecret } = await cliJson<{ client_secret: string }>(
      ['client', 'rotate-secret', rotated.client.client_id],
      env,
    );
    for (const served of [a, b]) await within('rotated secret', async () => (await recentStatus(served, rotated.headers)) === 401);
    const withNewSecret = { ...rotated.headers, 'x-client-secret': newSecret };
    for (const served of [a, b]) assert.equal(await recentStatus(served, withNewSecret), 200);

    await db.pool.query('DELETE FROM oauth_clients WHERE client_id = $1', [rotated.client.client_id]);
    for (const served of [a, b]) await within('deleted client', async () => (await recentStatus(served, withNewSecret)) === 401);
  });

  test('a session signed out at A: refused by A on the next request, by B within 100 ms', async () => {
    const member = await createMember(db.pool);
    for (const served of [a, b]) assert.equal((await locations(served, member.token)).status, 200);
    // Expired where no notification tells: both processes still accept the session, from their caches.
    const setExpiry = (at: Date): [string, unknown[]] => [
      "UPDATE user_sessions SET expires_at = $2 WHERE token_hash = sha256(convert_to($1, 'UTF8'))",
      [member.token, at],
    ];
    const {
      rows: [session],
    } = await db.pool.query<{ expires_at: Date }>(
      "SELECT expires_at FROM user_sessions WHERE token_hash = sha256(convert_to($1, 'UTF8'))",
      [member.token],
    );
    await whileUnannounced(setExpiry(new Date(Date.now() - 60_000)), setExpiry(session!.expires_at), async () => {
      for (const served of [a, b])
        assert.equal((await locations(served, member.token)).status, 200, 'the session is served from the process cache');
    });
    const signedOut = await fetch(`${a.url}/auth/session`, { method: 'DELETE', headers: { 'x-user-token': member.token } });
    assert.equal(signedOut.status, 204);
    assert.equal((await locations(a, member.token)).status, 401);
    await within('signed-out session at B', async () => (await locations(b, member.token)).status === 401);
  });

  test("a call completed through A shows in B's /calls/recent within 100 ms; a location created at A shows at B", async () => {
    const { member, headers } = await connect();
    const ids = async (served: Served) => ((await (await recent(served, headers)).json()) as { id: string }[]).map((call) => call.id);
    assert.deepEqual(await ids(b), []);
    // A completed call inserted where no notification tells: B's list comes from its cache.
    await whileUnannounced(
      [
        "INSERT INTO calls (id, organization_id, status, summary, duration_seconds, completed_at) VALUES ('00000000-0000-4000-8000-00000000ca11', $1, 'completed', 'Unannounced', 1, now())",
        [member.org.id],
      ],
      ["DELETE FROM calls WHERE id = '00000000-0000-4000-8000-00000000ca11'", []],
      async () => assert.deepEqual(await ids(b), [], 'the list is served from the process cache'),
    );
    const created = await fetch(`${a.url}/calls`, {
      method: 'POST',
      headers: { 'x-user-token': member.token, 'content-type': 'application/json' },
      body: JSON.stringify({ summary: 'Booked a visit', duration_seconds: 42 }),
    });
    assert.equal(created.status, 201);
    const { id } = (await created.json()) as { id: string };
    assert.deepEqual(await ids(a), [id]);
    await within('completed call at B', async () => (await ids(b)).includes(id));

    // Completing a call recorded in progress, through B this time.
    const started = (await (await fetch(`${b.url}/calls`, { method: 'POST', headers: { 'x-user-token': member.token } })).json()) as {
      id: string;
    };
    assert.deepEqual(await ids(a), [id]);
    const completed = await fetch(`${b.url}/calls/${started.id}/complete`, {
      method: 'POST',
      headers: { 'x-user-token': member.token, 'content-type': 'application/json' },
      body: JSON.stringify({ summary: 'Called back', duration_seconds: 7 }),
    });
    assert.equal(completed.status, 200);
    await within('call completed at B, seen at A', async () => (await ids(a)).includes(started.id));

    const names = async (served: Served) =>
      ((await (await locations(served, member.token)).json()) as { name: string }[]).map((l) => l.name);
    assert.deepEqual(await names(b), []);
    await whileUnannounced(
      [
        "INSERT INTO locations (id, organization_id, name) VALUES ('00000000-0000-4000-8000-0000000010ca', $1, 'Unannounced')",
        [member.org.id],
      ],
      ["DELETE FROM locations WHERE id = '00000000-0000-4000-8000-0000000010ca'", []],
      async () => assert.deepEqual(await names(b), [], 'the locations are served from the process cache'),
    );
    const location = await fetch(`${a.url}/locations`, {
      method: 'POST',
      headers: { 'x-user-token': member.token, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Depot' }),
    });
    assert.equal(location.status, 201);
    assert.deepEqual(await names(a), ['Depot']);
    await within('new location at B', async () => (await names(b)).includes('Depot'));
  });

  test('the LISTEN connection lost: no stale answer while it is away, caching resumes (and invalidates) once it is back', async () => {
    const listeners = () =>
      db.pool
        .query<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE application_name = 'switchboard-cache-listener' AND datname = current_database()",
        )
        .then((r) => r.rows.map((row) => row.pid));
    assert.equal((await listeners()).length, 2);

    const connection = await connect();
    const { headers, tokens } = connection;
    await usedEverywhere(connection);
    // Both listeners gone (and waited for), then the token revoked straight in PostgreSQL:
    // its notification reaches no one, so only the caches being off keeps the answers true.
    for (const pid of await listeners()) await db.pool.query('SELECT pg_terminate_backend($1, 5000)', [pid]);
    await db.pool.query("UPDATE oauth_access_tokens SET revoked_at = now() WHERE token_hash = sha256(convert_to($1, 'UTF8'))", [
      tokens.access_token,
    ]);
    assert.deepEqual([await recentStatus(a, headers), await recentStatus(b, headers)], [401, 401]);

    // Back (reconnected with backoff): caching and invalidation work again.
    const deadline = Date.now() + 15_000;
    while ((await listeners()).length < 2) {
      assert.ok(Date.now() < deadline, 'the cache listeners did not reconnect');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const again = await connect();
    await usedEverywhere(again);
    await db.pool.query('UPDATE oauth_grants SET revoked_at = now() WHERE id = $1', [again.tokens.grant_id]);
    for (const served of [a, b])
      await within('revoked grant after reconnect', async () => (await recentStatus(served, again.headers)) === 401);
  });
});
