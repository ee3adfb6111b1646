// grant_type=refresh_token (RFC 6749 §6) with rotation (RFC 9700 §4.14.2):
// every refresh of the current refresh token returns a new one and marks the
// presented one rotated. A grant has exactly one current refresh token.
//
// A rotated token presented again within REFRESH_REUSE_GRACE (a platform
// retrying a response it lost) gets a new access token and the chain's
// current refresh token — the same one the first refresh returned, kept
// sealed under SECRET_KEY for that purpose — never a second successor: a
// thief replaying inside the grace window cannot fork the chain (security
// review item 2). After the grace, check-refresh-token-reuse revokes the grant.
import { generateToken, hashToken } from '../../auth/tokens.ts';
import { withTransaction } from '../../db/transaction.ts';
import type { SecretBox } from '../../webhooks/secret-box.ts';
import { REFRESH_TOKEN_CHECKS, runChecks } from '../checks/index.ts';
import { stringParam, type RefreshContext } from '../checks/context.ts';
import { revokeGrant } from '../grants.queries.ts';
import { InvalidGrant, InvalidRequest, OAuthError } from '../oauth.errors.ts';
import {
  findCurrentRefreshToken, lockRefreshToken, markRefreshTokenRotated, readRefreshToken, recordSuccessor, rotateRefreshToken, type RefreshTokenRecord,
} from '../tokens.queries.ts';
import { formatScope, normalizeScopes } from '../scopes.ts';
import { issueAccessToken, issueTokenPair, type TokenResponse, type TokenTtls } from '../tokens.service.ts';
import type { GrantHandler } from './index.ts';
import { evictLocally } from '../../cache/process-caches.ts';

/** The current token is exchanged: a new pair, and the successor sealed on the presented token's row. */
async function rotate(tx: Parameters<typeof lockRefreshToken>[0], ttls: TokenTtls, box: SecretBox, record: RefreshTokenRecord, scopes: string[]) {
  // Rotated first: the one-current-token-per-grant index admits the successor only then.
  await markRefreshTokenRotated(tx, record.id);
  const { refresh_token_id: successorId, ...pair } = await issueTokenPair(tx, ttls, {
    grantId: record.grant_id, accessScopes: scopes, refreshScopes: record.scopes,
  });
  await recordSuccessor(tx, { id: record.id, successorId, successorCiphertext: box.seal(pair.refresh_token, record.grant_id) });
  return pair;
}

/** A rotated token within its grace: a new access token beside the chain's current refresh token. */
async function replayWithinGrace(
  tx: Parameters<typeof lockRefreshToken>[0], ttls: TokenTtls, box: SecretBox, record: RefreshTokenRecord, scopes: string[],
): Promise<TokenResponse | OAuthError> {
  const current = await findCurrentRefreshToken(tx, record.grant_id);
  if (!current || current.expired || !current.sealed) {
    return new InvalidGrant('refresh token was already rotated, and its successor is no longer valid (RFC 6749 §5.2)');
  }
  const refreshToken = box.open(current.sealed, record.grant_id);
  const access = await issueAccessToken(tx, ttls, { grantId: record.grant_id, scopes });
  return { ...access, refresh_token: refreshToken };
}

/**
 * The common case in two statements instead of a transaction of seven: the
 * presented token read (no lock) and checked by the same list of checks, then
 * rotated by app_refresh_rotate, which locks it and goes ahead only if it is
 * still current and its grant live. Undefined: not the common case (a rotated
 * token, or one rotated meanwhile): the transactional path decides.
 */
async function rotateCurrent(
  pool: Parameters<GrantHandler>[0], ttls: TokenTtls, box: SecretBox, client: RefreshContext['client'], params: RefreshContext['params'],
  graceSeconds: number, tokenHash: Buffer,
): Promise<TokenResponse | undefined> {
  const record = await readRefreshToken(pool, tokenHash);
  if (!record || record.rotated_seconds_ago !== null) return undefined;
  const ctx: RefreshContext = {
    client, params, token: record, graceSeconds,
    ...(ttls.refreshTokenMaxLifetime !== undefined ? { maxLifetimeSeconds: ttls.refreshTokenMaxLifetime } : {}),
  };
  // A current token's failed check revokes nothing (only reuse does), so it is answered as it is.
  await runChecks(REFRESH_TOKEN_CHECKS, ctx);
  const accessToken = generateToken('sba');
  const refreshToken = generateToken('sbr');
  const accessScopes = normalizeScopes(ctx.scopes!);
  const now = Date.now();
  const successor = await rotateRefreshToken(pool, {
    id: record.id,
    grantId: record.grant_id,
    accessHash: hashToken(accessToken),
    accessScopes,
    accessExpiresAt: new Date(now + ttls.accessTokenTtl * 1000),
    refreshHash: hashToken(refreshToken),
    refreshExpiresAt: new Date(now + ttls.refreshTokenTtl * 1000),
    maxLifetimeSeconds: ttls.refreshTokenMaxLifetime,
    sealedSuccessor: box.seal(refreshToken, record.grant_id),
  });
  if (successor === undefined) return undefined;
  return { access_token: accessToken, token_type: 'Bearer', expires_in: ttls.accessTokenTtl, refresh_token: refreshToken, scope: formatScope(accessScopes) };
}

export const handleRefreshToken: GrantHandler = async function handleRefreshToken(pool, ttls, client, params, options) {
  const refreshToken = stringParam(params, 'refresh_token');
  if (refreshToken === undefined) throw new InvalidRequest('refresh_token is required (RFC 6749 §6)');
  const rotated = await rotateCurrent(pool, ttls, options.secretBox, client, params, options.refreshReuseGrace, hashToken(refreshToken));
  if (rotated) return rotated;
  const outcome = await withTransaction<TokenResponse | OAuthError>(pool, async (tx) => {
    // Concurrent refreshes of one token serialise on this lock; the second sees it rotated.
    const record = await lockRefreshToken(tx, hashToken(refreshToken));
    if (!record) return new InvalidGrant('refresh token is unknown (RFC 6749 §5.2)');
    const ctx: RefreshContext = {
      client, params, token: record, graceSeconds: options.refreshReuseGrace,
      ...(ttls.refreshTokenMaxLifetime !== undefined ? { maxLifetimeSeconds: ttls.refreshTokenMaxLifetime } : {}),
    };
    try {
      await runChecks(REFRESH_TOKEN_CHECKS, ctx);
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      if (error.revokeGrant) {
        await revokeGrant(tx, record.grant_id, error.revokeGrant);
        error.revokedGrantId = record.grant_id;
      }
      return error;
    }
    if (record.rotated_seconds_ago === null) return rotate(tx, ttls, options.secretBox, record, ctx.scopes!);
    return replayWithinGrace(tx, ttls, options.secretBox, record, ctx.scopes!);
  });
  if (outcome instanceof OAuthError) {
    // A revocation a failed check made is committed now: this process forgets the grant's tokens at once.
    if (outcome.revokedGrantId) evictLocally([`grant:${outcome.revokedGrantId}`]);
    throw outcome;
  }
  return outcome;
};

