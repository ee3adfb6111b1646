import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hashToken } from '../../src/auth/tokens.ts';
import { resolveSecretKey } from '../../src/config/secret-key.ts';
import { findClient, type OAuthClientWithSecret } from '../../src/oauth/clients.queries.ts';
import { handleRefreshToken } from '../../src/oauth/grants/refresh-token.ts';
import { InvalidGrant } from '../../src/oauth/oauth.errors.ts';
import type { TokenResponse } from '../../src/oauth/tokens.service.ts';
import { createSecretBox, type SecretBox } from '../../src/crypto/secret-box.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember } from '../helpers/fixtures.ts';
import { createClient, issueTokens, type IssuedTokens, type TestClient } from '../helpers/oauth.ts';
import { waitForLockWait } from '../helpers/races.ts';

// Refreshes arriving while one is on its way are rotated together
// (refresh-batches.ts, app_refresh_exchange_batch, migration 0017). Requests
// started in one turn meet the queue deterministically: the first goes alone
// at once, the others wait for it and then share one statement. Each must get
// exactly the answer it would get alone: one successor per token, the grace
// replay (same successor) for a second refresh of one token, every check's
// error and revocation.
describe('refresh rotations committed together', () => {
  let t: TestApp;
  let testClient: TestClient;
  let otherClient: OAuthClientWithSecret;
  let client: OAuthClientWithSecret;
  let box: SecretBox;
  const GRACE = 60;

  before(async () => {
    t = await startTestApp({ env: { REFRESH_REUSE_GRACE: String(GRACE) } });
    testClient = await createClient(t.db.pool, { scopes: ['calls:read', 'contacts:read'] });
    client = (await findClient(t.db.pool, testClient.client_id))!;
    otherClient = (await findClient(t.db.pool, (await createClient(t.db.pool, { scopes: ['calls:read'] })).client_id))!;
    box = createSecretBox(await resolveSecretKey(t.config), 'refresh-token');
  });
  after(() => t.close());

  async function connect(): Promise<IssuedTokens> {
    const member = await createMember(t.db.pool);
    return issueTokens(t.db.pool, {
      client: testClient,
      userId: member.user.id,
      organizationId: member.org.id,
      scopes: ['calls:read', 'contacts:read'],
    });
  }

  /** Every refresh started in the same turn, as the token route would: the first alone, the rest batched. */
  function refreshAll(tokens: string[], options: { grace?: number; as?: OAuthClientWithSecret[]; scope?: (string | undefined)[] } = {}) {
    return Promise.allSettled(
      tokens.map((refreshToken, i) =>
        handleRefreshToken(
          t.app.db,
          t.config,
          options.as?.[i] ?? client,
          { grant_type: 'refresh_token', refresh_token: refreshToken, ...(options.scope?.[i] ? { scope: options.scope[i] } : {}) },
          { refreshReuseGrace: options.grace ?? GRACE, secretBox: box, caches: t.app.caches },
        ),
      ),
    );
  }

  const answer = (settled: PromiseSettledResult<TokenResponse>) => {
    assert.equal(settled.status, 'fulfilled', settled.status === 'rejected' ? String(settled.reason) : '');
    return (settled as PromiseFulfilledResult<TokenResponse>).value;
  };
  const refusal = (settled: PromiseSettledResult<TokenResponse>) => {
    assert.equal(settled.status, 'rejected');
    return (settled as PromiseRejectedResult).reason as unknown;
  };

  async function chainOf(grantId: string) {
    const { rows } = await t.db.pool.query<{ token_hash: Buffer; rotated: boolean; successor_id: string | null; id: string }>(
      'SELECT id, token_hash, rotated_at IS NOT NULL AS rotated, successor_id FROM oauth_refresh_tokens WHERE grant_id = $1',
      [grantId],
    );
    return rows;
  }
  async function accessExpiry(accessToken: string) {
    const {
      rows: [row],
    } = await t.db.pool.query<{ expires_at: Date }>('SELECT expires_at FROM oauth_access_tokens WHERE token_hash = $1', [
      hashToken(accessToken),
    ]);
    return row!.expires_at.getTime();
  }

  test('the first refresh goes alone, the rest share one statement; each token is rotated once and its successor works', async () => {
    const issued = await Promise.all(Array.from({ length: 6 }, connect));
    const settled = await refreshAll(
      issued.map((x) => x.refresh_token),
      { scope: [undefined, 'calls:read'] },
    );
    const answers = settled.map(answer);
    assert.equal(new Set(answers.map((a) => a.refresh_token)).size, 6);
    assert.equal(answers[0]!.scope, 'calls:read contacts:read');
    assert.equal(answers[1]!.scope, 'calls:read', 'a narrower scope asked for inside a batch');
    assert.equal(answers[2]!.scope, 'calls:read contacts:read');
    // One transaction for the five batched: their access tokens' expiries count from the same now().
    const batched = new Set(await Promise.all(answers.slice(1).map((a) => accessExpiry(a.access_token))));
    assert.equal(batched.size, 1, 'the refreshes after the first were rotated in one statement');
    for (const [i, tokens] of issued.entries()) {
      const chain = await chainOf(tokens.grant_id);
      assert.equal(chain.length, 2, 'one successor');
      const old = chain.find((r) => r.token_hash.equals(hashToken(tokens.refresh_token)))!;
      const successor = chain.find((r) => r.id !== old.id)!;
      assert.ok(old.rotated);
      assert.equal(old.successor_id, successor.id);
      assert.ok(successor.token_hash.equals(hashToken(answers[i]!.refresh_token)), "each request gets its own token's successor");
    }
    // The successors rotate in turn (another batch).
    const again = (await refreshAll(answers.map((a) => a.refresh_token))).map(answer);
    assert.equal(new Set(again.map((a) => a.refresh_token)).size, 6);
  });

  test('the same token twice in one batch: one successor, and the second gets it as a grace replay (no fork)', async () => {
    const [first, twice] = await Promise.all([connect(), connect()]);
    // first goes alone; both refreshes of `twice` then wait for it and share the next statement.
    const settled = await refreshAll([first!.refresh_token, twice!.refresh_token, twice!.refresh_token]);
    const [, a, b] = settled.map(answer);
    assert.equal(a!.refresh_token, b!.refresh_token, 'both get the one successor');
    assert.notEqual(a!.access_token, b!.access_token);
    const chain = await chainOf(twice!.grant_id);
    assert.equal(chain.length, 2, 'the chain did not fork');
    assert.equal(chain.filter((r) => !r.rotated).length, 1);
    // The successor is current: it rotates once more.
    assert.ok(answer((await refreshAll([a!.refresh_token]))[0]!).refresh_token);
  });

  test("refreshes a check refuses inside a batch get that check's error and revocation; their neighbours rotate", async () => {
    const [first, valid, replayed, foreign] = await Promise.all([connect(), connect(), connect(), connect()]);
    // `replayed` is rotated once; presented again with no grace, reuse detection revokes its grant.
    const rotatedOnce = answer((await refreshAll([replayed!.refresh_token]))[0]!);
    const settled = await refreshAll(
      [first!.refresh_token, valid!.refresh_token, replayed!.refresh_token, 'sbr_not_a_token_we_issued', foreign!.refresh_token],
      { grace: 0, as: [client, client, client, client, otherClient] },
    );
    answer(settled[0]!);
    answer(settled[1]!);
    const reuse = refusal(settled[2]!);
    assert.ok(reuse instanceof InvalidGrant);
    const {
      rows: [grant],
    } = await t.db.pool.query<{ revoked_reason: string | null }>('SELECT revoked_reason FROM oauth_grants WHERE id = $1', [
      replayed!.grant_id,
    ]);
    assert.equal(grant!.revoked_reason, 'refresh_reuse', 'reuse after the grace revokes the grant');
    assert.ok(
      refusal((await refreshAll([rotatedOnce.refresh_token]))[0]!) instanceof InvalidGrant,
      "the revoked chain's successor is dead",
    );
    assert.ok(refusal(settled[3]!) instanceof InvalidGrant, 'unknown token');
    assert.ok(refusal(settled[4]!) instanceof InvalidGrant, "another client's token");
    assert.equal((await chainOf(foreign!.grant_id)).length, 1, "nothing written for the other client's token");
  });

  test('a declined refresh is decided outside the queue: its checks held up, the next refresh still rotates', async () => {
    const [replayed, next] = await Promise.all([connect(), connect()]);
    answer((await refreshAll([replayed!.refresh_token]))[0]!);
    // Reuse after the grace revokes the grant: hold that grant's row so the checks' revocation waits.
    const holder = await t.db.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM oauth_grants WHERE id = $1 FOR UPDATE', [replayed!.grant_id]);
      const reuse = refreshAll([replayed!.refresh_token], { grace: 0 });
      let declined = false;
      const done = () => (declined = true);
      void reuse.then(done, done);
      // The declined refresh's revocation waits for the held row; then another grant is refreshed.
      await waitForLockWait(t.db.pool);
      // Waiting for the declined refresh would mean waiting for the COMMIT below: the race ends such a wait as a failure.
      const rotated = await Promise.race([
        refreshAll([next!.refresh_token]).then(([settled]) => answer(settled!)),
        new Promise<'held up'>((resolve) => setTimeout(() => resolve('held up'), 5000)),
      ]);
      assert.notEqual(rotated, 'held up', "the next refresh waited for a declined one's checks");
      assert.equal(declined, false, 'the declined refresh was still held when the next one rotated');
      await holder.query('COMMIT');
      assert.ok(refusal((await reuse)[0]!) instanceof InvalidGrant);
    } finally {
      await holder.query('ROLLBACK').catch(() => {});
      holder.release();
    }
  });
});
