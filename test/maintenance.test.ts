// The hourly housekeeping (src/background.ts), each job run once on demand:
// what can no longer authenticate anything is deleted, what still can (or
// still counts against a login) stays.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { housekeepingJobs } from '../src/background.ts';
import { tickByHand } from '../src/tasks/task.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { createMember } from './helpers/fixtures.ts';
import { createClient, issueTokens } from './helpers/oauth.ts';

describe('hourly maintenance', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const runAll = async () => {
    for (const job of housekeepingJobs({ pool: t.db.pool, config: t.config })) await job.run(tickByHand);
  };
  const count = async (sql: string, params: unknown[]) => (await t.db.pool.query<{ n: number }>(sql, params)).rows[0]!.n;

  test('expired sessions are deleted; live ones stay', async () => {
    const expired = await createMember(t.db.pool);
    const live = await createMember(t.db.pool);
    await t.db.pool.query("UPDATE user_sessions SET expires_at = now() - interval '1 second' WHERE user_id = $1", [expired.user.id]);
    await runAll();
    const sessions = (userId: string) => count('SELECT count(*)::int AS n FROM user_sessions WHERE user_id = $1', [userId]);
    assert.equal(await sessions(expired.user.id), 0);
    assert.equal(await sessions(live.user.id), 1);
  });

  test('login failures whose window ended over an hour ago are deleted; a window still counting stays', async () => {
    const subject = (name: string) => `maintenance-${name}-${randomBytes(4).toString('hex')}`;
    const stale = subject('stale');
    const endedRecently = subject('ended-recently');
    const open = subject('open');
    await t.db.pool.query(
      `INSERT INTO login_failures (subject, failures, window_started_at, window_seconds) VALUES
         ($1, 3, now() - interval '2 hours', 900),
         ($2, 3, now() - interval '1 hour', 900),
         ($3, 3, now() - interval '1 minute', 900)`,
      [stale, endedRecently, open],
    );
    await runAll();
    const { rows } = await t.db.pool.query<{ subject: string }>(
      'SELECT subject FROM login_failures WHERE subject = ANY($1) ORDER BY subject',
      [[stale, endedRecently, open]],
    );
    assert.deepEqual(rows.map((r) => r.subject).sort(), [endedRecently, open].sort());
  });

  test('authorization codes expired over a day ago are deleted; a recently expired one stays, so its replay is still recognised', async () => {
    const member = await createMember(t.db.pool);
    const client = await createClient(t.db.pool);
    const { grant_id: grantId } = await issueTokens(t.db.pool, { client, userId: member.user.id, organizationId: member.org.id });
    const code = async (expiresAgo: string) => {
      const hash = randomBytes(32);
      await t.db.pool.query(
        `INSERT INTO oauth_authorization_codes (code_hash, grant_id, redirect_uri, redirect_uri_given, expires_at)
         VALUES ($1, $2, 'https://platform.example/cb', false, now() - $3::interval)`,
        [hash, grantId, expiresAgo],
      );
      return hash;
    };
    await code('25 hours');
    const recent = await code('1 hour');
    const live = await code('-10 minutes');
    await runAll();
    const left = await t.db.pool.query<{ code_hash: Buffer }>('SELECT code_hash FROM oauth_authorization_codes WHERE grant_id = $1', [
      grantId,
    ]);
    const hex = (hashes: Buffer[]) => hashes.map((h) => h.toString('hex')).sort();
    assert.deepEqual(hex(left.rows.map((r) => r.code_hash)), hex([recent, live]));
  });
});
