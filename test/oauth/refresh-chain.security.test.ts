import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember } from '../helpers/fixtures.ts';
import { createClient, issueTokens, tokenRequest, type TestClient } from '../helpers/oauth.ts';

// A grant has one current refresh token, so a thief replaying a refresh token
// within REFRESH_REUSE_GRACE cannot keep a chain of their own out of reach of
// reuse detection: a replay inside the grace gets the current token, and
// any use of a superseded token after the grace revokes the grant.
//
// "After the grace" is reached by moving rotated_at back, not by waiting.
describe('refresh token rotation keeps one chain per grant', () => {
  let t: TestApp;
  let client: TestClient;
  before(async () => {
    t = await startTestApp({ env: { REFRESH_REUSE_GRACE: '60', REFRESH_TOKEN_MAX_LIFETIME: '7776000' } });
    client = await createClient(t.db.pool, { scopes: ['calls:read'] });
  });
  after(() => t.close());

  async function connect() {
    const member = await createMember(t.db.pool);
    return issueTokens(t.db.pool, { client, userId: member.user.id, organizationId: member.org.id });
  }
  const refresh = (refreshToken: string) =>
    tokenRequest(t.app, {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: client.client_id,
      client_secret: client.client_secret,
    });
  const userinfo = (accessToken: string) => t.app.inject({ url: '/oauth/userinfo', headers: { authorization: `Bearer ${accessToken}` } });

  async function currentRefreshTokens(grantId: string): Promise<number> {
    const { rows } = await t.db.pool.query(
      'SELECT count(*)::int AS n FROM oauth_refresh_tokens WHERE grant_id = $1 AND rotated_at IS NULL AND revoked_at IS NULL AND expires_at > now()',
      [grantId],
    );
    return rows[0].n;
  }
  async function graceOver(grantId: string) {
    await t.db.pool.query(
      "UPDATE oauth_refresh_tokens SET rotated_at = now() - interval '61 seconds' WHERE grant_id = $1 AND rotated_at IS NOT NULL",
      [grantId],
    );
  }
  async function grantRevoked(grantId: string): Promise<string | null> {
    const { rows } = await t.db.pool.query('SELECT revoked_reason FROM oauth_grants WHERE id = $1', [grantId]);
    return rows[0].revoked_reason;
  }

  test('legitimate client first: the thief replaying R1 inside the grace gets the same R2, not a chain of its own', async () => {
    const r1 = await connect();
    const legit = await refresh(r1.refresh_token);
    assert.equal(legit.statusCode, 200);
    const thief = await refresh(r1.refresh_token);
    assert.equal(thief.statusCode, 200);
    assert.equal(thief.json().refresh_token, legit.json().refresh_token, 'the same successor');
    assert.notEqual(thief.json().access_token, legit.json().access_token);
    assert.equal(await currentRefreshTokens(r1.grant_id), 1);

    // The legitimate client moves on: R2 → R3. The thief's copy of R2 is now superseded too.
    const r3 = await refresh(legit.json().refresh_token);
    assert.equal(r3.statusCode, 200);
    assert.equal(await currentRefreshTokens(r1.grant_id), 1);
    await graceOver(r1.grant_id);
    const reuse = await refresh(thief.json().refresh_token);
    assert.equal(reuse.statusCode, 400);
    assert.equal(reuse.json().error, 'invalid_grant');
    assert.equal(await grantRevoked(r1.grant_id), 'refresh_reuse', 'reuse detection fired');
    assert.equal((await refresh(r3.json().refresh_token)).statusCode, 400, 'the whole family is revoked');
    assert.equal((await userinfo(r3.json().access_token)).statusCode, 401);
  });

  test("thief first: the legitimate retry inside the grace gets the thief's R2, so the next reuse is detected", async () => {
    const r1 = await connect();
    const thief = await refresh(r1.refresh_token);
    const legit = await refresh(r1.refresh_token);
    assert.equal(legit.statusCode, 200);
    assert.equal(legit.json().refresh_token, thief.json().refresh_token);
    // The thief keeps refreshing; the legitimate client's R2 is superseded and, after the grace, its use revokes the grant.
    const thiefNext = await refresh(thief.json().refresh_token);
    assert.equal(thiefNext.statusCode, 200);
    await graceOver(r1.grant_id);
    assert.equal((await refresh(legit.json().refresh_token)).statusCode, 400);
    assert.equal(await grantRevoked(r1.grant_id), 'refresh_reuse');
    assert.equal((await refresh(thiefNext.json().refresh_token)).statusCode, 400, "the thief's chain ends too");
    assert.equal((await userinfo(thiefNext.json().access_token)).statusCode, 401);
  });

  test('both at once: concurrent refreshes of R1 all get the one same R2', async () => {
    const r1 = await connect();
    const answers = await Promise.all(Array.from({ length: 8 }, () => refresh(r1.refresh_token)));
    assert.deepEqual(
      answers.map((a) => a.statusCode),
      Array(8).fill(200),
    );
    assert.equal(new Set(answers.map((a) => a.json().refresh_token)).size, 1, 'one successor');
    assert.equal(new Set(answers.map((a) => a.json().access_token)).size, 8);
    assert.equal(await currentRefreshTokens(r1.grant_id), 1);
    assert.equal((await refresh(answers[0]!.json().refresh_token)).statusCode, 200, 'the chain continues');
  });

  test('a replay inside the grace of a token two rotations back gets the current token', async () => {
    const r1 = await connect();
    const r2 = (await refresh(r1.refresh_token)).json();
    const r3 = (await refresh(r2.refresh_token)).json();
    const replay = await refresh(r1.refresh_token);
    assert.equal(replay.statusCode, 200);
    assert.equal(replay.json().refresh_token, r3.refresh_token);
  });

  test('the sealed successor is forgotten once the grace is over, and no refresh token is stored in the clear', async () => {
    const r1 = await connect();
    const r2 = (await refresh(r1.refresh_token)).json();
    const { rows } = await t.db.pool.query('SELECT successor_ciphertext FROM oauth_refresh_tokens WHERE grant_id = $1', [r1.grant_id]);
    const dump = JSON.stringify(rows) + rows.map((r) => r.successor_ciphertext?.toString('latin1') ?? '').join('');
    assert.ok(!dump.includes(r2.refresh_token) && !dump.includes(r2.refresh_token.slice(4)));
    await graceOver(r1.grant_id);
    const { purgeExpiredOAuthRows } = await import('../../src/oauth/oauth.maintenance.ts');
    await purgeExpiredOAuthRows(t.db.pool, 60);
    const after = await t.db.pool.query(
      'SELECT count(*)::int AS n FROM oauth_refresh_tokens WHERE grant_id = $1 AND successor_ciphertext IS NOT NULL',
      [r1.grant_id],
    );
    assert.equal(after.rows[0].n, 0);
  });
});

describe('refresh tokens have an absolute lifetime (REFRESH_TOKEN_MAX_LIFETIME)', () => {
  let t: TestApp;
  let client: TestClient;
  before(async () => {
    // A long sliding lifetime, a one-hour absolute cap.
    t = await startTestApp({ env: { REFRESH_TOKEN_TTL: '31536000', REFRESH_TOKEN_MAX_LIFETIME: '3600' } });
    client = await createClient(t.db.pool, { scopes: ['calls:read'] });
  });
  after(() => t.close());

  const refresh = (refreshToken: string) =>
    tokenRequest(t.app, {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: client.client_id,
      client_secret: client.client_secret,
    });

  test("a rotated refresh token never outlives the grant's cap, and once the grant is older than the cap refreshing stops", async () => {
    const member = await createMember(t.db.pool);
    const tokens = await issueTokens(t.db.pool, {
      client,
      userId: member.user.id,
      organizationId: member.org.id,
      refreshTokenTtl: 31536000,
    });
    const next = await refresh(tokens.refresh_token);
    assert.equal(next.statusCode, 200);
    const { rows } = await t.db.pool.query(
      `SELECT extract(epoch FROM r.expires_at - g.created_at)::float8 AS lifetime
         FROM oauth_refresh_tokens r JOIN oauth_grants g ON g.id = r.grant_id
        WHERE r.grant_id = $1 AND r.rotated_at IS NULL`,
      [tokens.grant_id],
    );
    assert.ok(rows[0].lifetime <= 3600, `the new token ends at the cap, not a year on (${rows[0].lifetime} s)`);

    // Ninety minutes later (the approval moved back): the cap has passed, whatever the token's own expiry says.
    await t.db.pool.query("UPDATE oauth_grants SET created_at = created_at - interval '90 minutes' WHERE id = $1", [tokens.grant_id]);
    await t.db.pool.query(
      "UPDATE oauth_refresh_tokens SET expires_at = now() + interval '1 day' WHERE grant_id = $1 AND rotated_at IS NULL",
      [tokens.grant_id],
    );
    const capped = await refresh(next.json().refresh_token);
    assert.equal(capped.statusCode, 400);
    assert.equal(capped.json().error, 'invalid_grant');
    assert.match(capped.json().error_description, /maximum lifetime/);
  });
});
