import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { generateToken, hashToken } from '../../src/auth/tokens.ts';
import { resolveSecretKey } from '../../src/config/secret-key.ts';
import { openSuccessor, sealSuccessor } from '../../src/oauth/successor-seal.ts';
import { exchangeRefreshToken } from '../../src/oauth/tokens.queries.ts';
import { setUserActiveByEmail } from '../../src/organizations/users.queries.ts';
import { createSecretBox, type SecretBox } from '../../src/crypto/secret-box.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember, type Member } from '../helpers/fixtures.ts';
import { createClient, issueTokens, tokenRequest, type IssuedTokens, type TestClient } from '../helpers/oauth.ts';

// The refresh fast path (app_refresh_exchange, migration 0014) rotates in one
// statement only when every rule of REFRESH_TOKEN_CHECKS holds. For every way
// a rule can fail it must write nothing and decline, so that the named checks
// answer: the same error, the same revocation, the same grace replay as
// without the fast path. Each case below calls the statement directly (it
// declines, nothing changes), then sends the request (the check's own error).
describe('refresh in one statement: app_refresh_exchange declines whatever a check refuses', () => {
  let t: TestApp;
  let client: TestClient;
  let other: TestClient;
  let box: SecretBox;
  const GRACE = 60;
  const MAX_LIFETIME = 7_776_000;
  before(async () => {
    t = await startTestApp({ env: { REFRESH_REUSE_GRACE: String(GRACE), REFRESH_TOKEN_MAX_LIFETIME: String(MAX_LIFETIME) } });
    client = await createClient(t.db.pool, { scopes: ['calls:read', 'contacts:read', 'leads:read'] });
    other = await createClient(t.db.pool, { scopes: ['calls:read'] });
    box = createSecretBox(await resolveSecretKey(t.config), 'refresh-token');
  });
  after(() => t.close());

  async function connect(scopes = ['calls:read', 'contacts:read']): Promise<{ member: Member; tokens: IssuedTokens }> {
    const member = await createMember(t.db.pool);
    return { member, tokens: await issueTokens(t.db.pool, { client, userId: member.user.id, organizationId: member.org.id, scopes }) };
  }
  const refresh = (refreshToken: string, extra: Record<string, string> = {}, as: TestClient = client) =>
    tokenRequest(t.app, {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: as.client_id,
      client_secret: as.client_secret,
      ...extra,
    });

  /** The fast path's statement, as the token endpoint sends it. */
  function fastPath(refreshToken: string, options: { clientId?: string; scopes?: string[] } = {}) {
    const successorId = randomUUID();
    const successor = generateToken('sbr');
    return exchangeRefreshToken(t.db.pool, {
      tokenHash: hashToken(refreshToken),
      clientId: options.clientId ?? client.client_id,
      requestedScopes: options.scopes,
      accessScopes: options.scopes,
      accessHash: hashToken(generateToken('sba')),
      accessTtlSeconds: 3600,
      successorId,
      refreshHash: hashToken(successor),
      refreshTtlSeconds: 5_184_000,
      maxLifetimeSeconds: MAX_LIFETIME,
      sealedSuccessor: sealSuccessor(box, successor, successorId),
    });
  }

  /** Everything the fast path could write for a grant: it must not move when the statement declines. */
  async function grantState(grantId: string): Promise<unknown> {
    const { rows } = await t.db.pool.query(
      `SELECT (SELECT json_agg(json_build_object('id', id, 'rotated_at', rotated_at, 'revoked_at', revoked_at, 'successor_id', successor_id,
                                                 'sealed', successor_ciphertext IS NOT NULL) ORDER BY created_at, id)
                 FROM oauth_refresh_tokens WHERE grant_id = $1) AS refresh,
              (SELECT count(*)::int FROM oauth_access_tokens WHERE grant_id = $1) AS access,
              (SELECT revoked_reason FROM oauth_grants WHERE id = $1) AS revoked`,
      [grantId],
    );
    return rows[0];
  }

  async function declines(tokens: IssuedTokens, presented: string, options: { clientId?: string; scopes?: string[] } = {}) {
    const before = await grantState(tokens.grant_id);
    assert.equal(await fastPath(presented, options), undefined, 'the fast path declines');
    assert.deepEqual(await grantState(tokens.grant_id), before, 'and writes nothing');
  }

  test('all rules hold: one statement rotates, and the response is the rotated pair', async () => {
    const { tokens } = await connect();
    const before = (await grantState(tokens.grant_id)) as { access: number };
    assert.deepEqual(await fastPath(tokens.refresh_token, { scopes: ['calls:read'] }), ['calls:read']);
    const after = (await grantState(tokens.grant_id)) as {
      access: number;
      refresh: { rotated_at: string | null; successor_id: string | null; sealed: boolean }[];
    };
    assert.equal(after.access, before.access + 1);
    assert.equal(after.refresh.length, 2);
    assert.ok(
      after.refresh[0]!.rotated_at && after.refresh[0]!.successor_id && after.refresh[0]!.sealed,
      'rotated row: rotated, successor and sealed copy set together',
    );
    assert.equal(after.refresh[1]!.rotated_at, null);
  });

  test('another client: declined, then invalid_grant from check-refresh-token-client (nothing revoked)', async () => {
    const { tokens } = await connect();
    await declines(tokens, tokens.refresh_token, { clientId: other.client_id });
    const res = await refresh(tokens.refresh_token, {}, other);
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error, 'invalid_grant');
    assert.match(res.json().error_description, /refresh token was issued to another client/);
    assert.equal((await refresh(tokens.refresh_token)).statusCode, 200, 'still usable by its own client');
  });

  test('revoked token: declined, then "refresh token has been revoked"', async () => {
    const { tokens } = await connect();
    await t.db.pool.query('UPDATE oauth_refresh_tokens SET revoked_at = now() WHERE grant_id = $1', [tokens.grant_id]);
    await declines(tokens, tokens.refresh_token);
    const res = await refresh(tokens.refresh_token);
    assert.equal(res.json().error, 'invalid_grant');
    assert.match(res.json().error_description, /refresh token has been revoked/);
  });

  test('expired token: declined, then "refresh token is expired"', async () => {
    const { tokens } = await connect();
    await t.db.pool.query("UPDATE oauth_refresh_tokens SET expires_at = now() - interval '1 second' WHERE grant_id = $1", [
      tokens.grant_id,
    ]);
    await declines(tokens, tokens.refresh_token);
    const res = await refresh(tokens.refresh_token);
    assert.equal(res.json().error, 'invalid_grant');
    assert.match(res.json().error_description, /^refresh token is expired \(RFC 6749/);
  });

  test('grant older than REFRESH_TOKEN_MAX_LIFETIME: declined, then the maximum-lifetime error', async () => {
    const { tokens } = await connect();
    await t.db.pool.query('UPDATE oauth_grants SET created_at = now() - make_interval(secs => $2 + 1) WHERE id = $1', [
      tokens.grant_id,
      MAX_LIFETIME,
    ]);
    await declines(tokens, tokens.refresh_token);
    const res = await refresh(tokens.refresh_token);
    assert.equal(res.json().error, 'invalid_grant');
    assert.match(res.json().error_description, /older than its maximum lifetime/);
  });

  test('revoked grant: declined, then "the authorization grant has been revoked"', async () => {
    const { tokens } = await connect();
    await t.db.pool.query("UPDATE oauth_grants SET revoked_at = now(), revoked_reason = 'user' WHERE id = $1", [tokens.grant_id]);
    await declines(tokens, tokens.refresh_token);
    const res = await refresh(tokens.refresh_token);
    assert.equal(res.json().error, 'invalid_grant');
    assert.match(res.json().error_description, /the authorization grant has been revoked/);
  });

  test('deactivated user: declined, then "no longer active"', async () => {
    const { member, tokens } = await connect();
    await setUserActiveByEmail(t.db.pool, member.email, false);
    await declines(tokens, tokens.refresh_token);
    const res = await refresh(tokens.refresh_token);
    assert.equal(res.json().error, 'invalid_grant');
    assert.match(res.json().error_description, /no longer active/);
  });

  test('wider scope, or a scope that does not exist: declined, then invalid_scope', async () => {
    const { tokens } = await connect();
    await declines(tokens, tokens.refresh_token, { scopes: ['calls:read', 'leads:read'] });
    await declines(tokens, tokens.refresh_token, { scopes: ['calls:read', 'no-such-scope'] });
    for (const scope of ['calls:read leads:read', 'calls:read no-such-scope']) {
      const res = await refresh(tokens.refresh_token, { scope });
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().error, 'invalid_scope');
      assert.match(res.json().error_description, /scope exceeds what was granted/);
    }
  });

  test('unknown token: declined, then "refresh token is unknown"', async () => {
    const { tokens } = await connect();
    const unknown = generateToken('sbr');
    await declines(tokens, unknown);
    const res = await refresh(unknown);
    assert.equal(res.json().error, 'invalid_grant');
    assert.match(res.json().error_description, /refresh token is unknown/);
  });

  test('a replay within the grace: declined (never a second successor), then the same successor', async () => {
    const { tokens } = await connect();
    const first = await refresh(tokens.refresh_token);
    assert.equal(first.statusCode, 200);
    await declines(tokens, tokens.refresh_token);
    const replay = await refresh(tokens.refresh_token);
    assert.equal(replay.statusCode, 200);
    assert.equal(replay.json().refresh_token, first.json().refresh_token);
  });

  test('a reuse after the grace: declined, then the grant is revoked by check-refresh-token-reuse', async () => {
    const { tokens } = await connect();
    const first = await refresh(tokens.refresh_token);
    await t.db.pool.query(
      'UPDATE oauth_refresh_tokens SET rotated_at = now() - make_interval(secs => $2 + 1) WHERE grant_id = $1 AND rotated_at IS NOT NULL',
      [tokens.grant_id, GRACE],
    );
    await declines(tokens, tokens.refresh_token);
    const late = await refresh(tokens.refresh_token);
    assert.equal(late.json().error, 'invalid_grant');
    assert.match(late.json().error_description, /reused after the grace period; the grant is revoked/);
    assert.equal(((await grantState(tokens.grant_id)) as { revoked: string }).revoked, 'refresh_reuse');
    assert.equal((await refresh(first.json().refresh_token)).json().error, 'invalid_grant');
  });

  test('a sealed successor opens only for the successor it was sealed to', () => {
    const id = randomUUID();
    const sealed = sealSuccessor(box, 'sbr_plain', id);
    assert.equal(openSuccessor(box, sealed, id), 'sbr_plain');
    assert.equal(openSuccessor(box, sealed, randomUUID()), undefined, 'a ciphertext copied onto another chain does not open');
  });
});
