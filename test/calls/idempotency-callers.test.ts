// Idempotency keys belong to their caller (src/calls/idempotency.ts,
// keyCaller): while one caller's request with a key is in progress, another
// caller of the organization with the same key is not told 409 (its request
// goes ahead on its own); and an app's grant stays the same caller when its
// refresh token is rotated, so a retry with a new access token is replayed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember, type Member } from '../helpers/fixtures.ts';
import { createClient, issueTokens, platformHeaders, tokenRequest } from '../helpers/oauth.ts';

describe('Idempotency-Key: whose key it is', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const post = (headers: Record<string, string>, payload: object, key: string) =>
    t.app.inject({ method: 'POST', url: '/calls', payload, headers: { ...headers, 'idempotency-key': key } });
  const asUser = (member: Member) => ({ 'x-user-token': member.token });

  /** Backends of this database waiting for a lock in an INSERT INTO calls. */
  const blockedInserts = async () =>
    (
      await t.db.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO%calls%'`,
      )
    ).rows[0]!.n;
  async function untilBlocked(count: number, settledEarly: Promise<unknown>) {
    let early: unknown;
    void settledEarly.then((answer) => {
      early = answer;
    });
    for (let i = 0; i < 1000; i++) {
      if (early !== undefined) return early;
      if ((await blockedInserts()) >= count) return undefined;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`${count} requests never waited for the held lock`);
  }

  test('while one caller’s request with a key is in progress, another caller’s with the same key is not 409: both make their own call', async () => {
    const first = await createMember(t.db.pool);
    const second = await createMember(t.db.pool, { org: first.org, role: 'member' });
    // A call in progress (no summary): written by its own statement, not a batch of completed calls, so both inserts reach PostgreSQL.
    const body = { agent_id: null };
    // The call's foreign key takes a KEY SHARE lock on the organization: FOR UPDATE holds every insert back.
    const holder = await t.db.pool.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE', [first.org.id]);
    let answers: Awaited<ReturnType<typeof post>>[];
    try {
      const firstAnswer = post(asUser(first), body, 'shared-key');
      assert.equal(await untilBlocked(1, firstAnswer), undefined, 'the first request is in progress, held by the lock');
      const secondAnswer = post(asUser(second), body, 'shared-key');
      // Both wait in PostgreSQL at once: the second was let through while the first was in progress.
      const early = (await untilBlocked(2, secondAnswer)) as Awaited<ReturnType<typeof post>> | undefined;
      assert.equal(early, undefined, `the second caller was answered while the first was in progress: ${early?.statusCode} ${early?.body}`);
      await holder.query('COMMIT');
      answers = await Promise.all([firstAnswer, secondAnswer]);
    } finally {
      await holder.query('ROLLBACK').catch(() => {});
      holder.release();
    }
    assert.deepEqual(
      answers.map((r) => r.statusCode),
      [201, 201],
      answers.map((r) => r.body).join(' | '),
    );
    assert.notEqual(answers[0]!.json().id, answers[1]!.json().id, 'a call each');
    // Each replays its own.
    assert.equal((await post(asUser(first), body, 'shared-key')).body, answers[0]!.body);
    assert.equal((await post(asUser(second), body, 'shared-key')).body, answers[1]!.body);
  });

  test('an app’s grant stays the same caller after its refresh token is rotated: the retry with the new access token is replayed', async () => {
    const member = await createMember(t.db.pool);
    const client = await createClient(t.db.pool, { name: 'Rotating Platform', scopes: ['calls:read', 'calls:write'] });
    const tokens = await issueTokens(t.db.pool, { client, userId: member.user.id, organizationId: member.org.id, scopes: ['calls:write'] });
    const body = { summary: 'Sent before and after a refresh', duration_seconds: 9 };
    const before = await post(platformHeaders(tokens, client), body, 'rotation-key');
    assert.equal(before.statusCode, 201, before.body);

    const refreshed = await tokenRequest(t.app, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: client.client_id,
      client_secret: client.client_secret,
    });
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    const rotated = refreshed.json() as { access_token: string; refresh_token: string };
    assert.notEqual(rotated.access_token, tokens.access_token);
    assert.notEqual(rotated.refresh_token, tokens.refresh_token, 'the refresh token was rotated');

    const retried = await post(platformHeaders(rotated, client), body, 'rotation-key');
    assert.equal(retried.statusCode, 201);
    assert.equal(retried.headers['idempotent-replayed'], 'true');
    assert.equal(retried.body, before.body, 'the first answer, not a second call');
    const { rows } = await t.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM calls WHERE organization_id = $1', [
      member.org.id,
    ]);
    assert.equal(rows[0]!.n, 1);

    // A new connection of the same app (a new grant) is another caller.
    const reconnected = await issueTokens(t.db.pool, {
      client,
      userId: member.user.id,
      organizationId: member.org.id,
      scopes: ['calls:write'],
    });
    const other = await post(platformHeaders(reconnected, client), body, 'rotation-key');
    assert.equal(other.statusCode, 201);
    assert.notEqual(other.json().id, before.json().id);
  });
});
