// grant_type=refresh_token (RFC 6749 §6) with rotation (RFC 9700 §4.14.2):
// every refresh of the current refresh token returns a new one and marks the
// presented one rotated. A grant has exactly one current refresh token.
//
// A rotated token presented again within REFRESH_REUSE_GRACE (a platform
// retrying a response it lost) gets a new access token and the chain's
// current refresh token — the same one the first refresh returned, kept
// sealed under SECRET_KEY for that purpose — never a second successor: a
// thief replaying inside the grace window cannot fork the chain. After the
// grace, check-refresh-token-reuse revokes the grant.
import { randomUUID } from 'node:crypto';
import { generateToken, hashToken } from '../../auth/tokens.ts';
import type { Pool, Queryable } from '../../db/pool.ts';
import type { SecretBox } from '../../crypto/secret-box.ts';
import { REFRESH_TOKEN_CHECKS } from '../checks/index.ts';
import { requestedRefreshScopes } from '../checks/check-refresh-scope.ts';
import { established, stringParam, type RefreshContext } from '../checks/context.ts';
import { InvalidGrant, InvalidRequest, type OAuthError } from '../oauth.errors.ts';
import { exchangeRefreshToken, findCurrentRefreshToken, lockRefreshToken, type RefreshTokenRecord } from '../tokens.queries.ts';
import { formatScope, normalizeScopes } from '../scopes.ts';
import { openSuccessor, sealSuccessor } from '../successor-seal.ts';
import { issueAccessToken, type TokenResponse, type TokenTtls } from '../tokens.service.ts';
import { failedCheck, inGrantTransaction } from './grant-transaction.ts';
import type { GrantHandler, GrantOptions } from './grant-handler.ts';
import { refreshInBatch, type RefreshRequest } from './refresh-batches.ts';
import type { OAuthClientWithSecret } from '../clients.queries.ts';

/**
 * What app_refresh_exchange needs to exchange the presented
 * token for a new pair in one statement, all known before any read, and the
 * answer once it did. It rotates only if every rule of REFRESH_TOKEN_CHECKS
 * holds: the current token of a live grant, this client's, unexpired, the
 * scope within its own; otherwise nothing is written and the named checks
 * must decide.
 */
function prepareExchange(
  ttls: TokenTtls,
  box: SecretBox,
  clientId: string,
  params: RefreshContext['params'],
  tokenHash: Buffer,
): Pick<RefreshRequest, 'exchange' | 'answer'> {
  const accessToken = generateToken('sba');
  const refreshToken = generateToken('sbr');
  const successorId = randomUUID();
  const requested = requestedRefreshScopes(params);
  return {
    exchange: {
      tokenHash,
      clientId,
      requestedScopes: requested,
      accessScopes: requested && normalizeScopes(requested),
      accessHash: hashToken(accessToken),
      accessTtlSeconds: ttls.accessTokenTtl,
      successorId,
      refreshHash: hashToken(refreshToken),
      refreshTtlSeconds: ttls.refreshTokenTtl,
      maxLifetimeSeconds: ttls.refreshTokenMaxLifetime,
      sealedSuccessor: sealSuccessor(box, refreshToken, successorId),
    },
    answer: (scopes) => ({
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: ttls.accessTokenTtl,
      refresh_token: refreshToken,
      scope: formatScope(scopes),
    }),
  };
}

/** A rotated token within its grace: a new access token beside the chain's current refresh token. */
async function replayWithinGrace(
  tx: Queryable,
  ttls: TokenTtls,
  box: SecretBox,
  record: RefreshTokenRecord,
  scopes: string[],
): Promise<TokenResponse | OAuthError> {
  const current = await findCurrentRefreshToken(tx, record.grant_id);
  if (!current || current.expired || !current.sealed) {
    return new InvalidGrant('refresh token was already rotated, and its successor is no longer valid (RFC 6749 §5.2)');
  }
  const refreshToken = openSuccessor(box, current.sealed, current.id);
  if (refreshToken === undefined) {
    return new InvalidGrant('refresh token was already rotated; present the current refresh token (RFC 6749 §5.2)');
  }
  const access = await issueAccessToken(tx, ttls, { grantId: record.grant_id, scopes });
  return { ...access, refresh_token: refreshToken };
}

export const handleRefreshToken: GrantHandler = async function handleRefreshToken(pool, ttls, client, params, options) {
  const refreshToken = stringParam(params, 'refresh_token');
  if (refreshToken === undefined) throw new InvalidRequest('refresh_token is required (RFC 6749 §6)');
  const tokenHash = hashToken(refreshToken);
  // The common case in one statement, shared with the refreshes arriving at the same moment (refresh-batches.ts):
  // the current token, every rule holding.
  return refreshInBatch(pool, {
    ...prepareExchange(ttls, options.secretBox, client.client_id, params, tokenHash),
    decide: () => decideByChecks(pool, ttls, client, params, options, tokenHash),
  });
};

/**
 * Anything else (unknown, refused by a rule, a replay, a concurrent refresh of the same token) is decided
 * by the named checks on the locked row: they give every error and every revocation.
 */
async function decideByChecks(
  pool: Pool,
  ttls: TokenTtls,
  client: OAuthClientWithSecret,
  params: RefreshContext['params'],
  options: GrantOptions,
  tokenHash: Buffer,
): Promise<TokenResponse> {
  return inGrantTransaction(pool, options.caches, client.client_id, async (tx) => {
    // Concurrent refreshes of one token serialise on this lock; the second sees it rotated.
    const record = await lockRefreshToken(tx, tokenHash);
    if (!record) return new InvalidGrant('refresh token is unknown (RFC 6749 §5.2)');
    const ctx: RefreshContext = {
      client,
      params,
      token: record,
      graceSeconds: options.refreshReuseGrace,
      ...(ttls.refreshTokenMaxLifetime !== undefined ? { maxLifetimeSeconds: ttls.refreshTokenMaxLifetime } : {}),
    };
    const failed = await failedCheck(tx, REFRESH_TOKEN_CHECKS, ctx, record.grant_id);
    if (failed) return failed;
    if (record.rotated_seconds_ago !== null)
      return replayWithinGrace(tx, ttls, options.secretBox, record, established(ctx.scopes, 'check-refresh-scope'));
    // Current and every check passed on the locked row (the fast path raced with a change that is gone again):
    // the same statement, which sees what the checks saw.
    const { exchange, answer } = prepareExchange(ttls, options.secretBox, client.client_id, params, tokenHash);
    const scopes = await exchangeRefreshToken(tx, exchange);
    if (!scopes) throw new Error('app_refresh_exchange declined a refresh that every check passed');
    return answer(scopes);
  });
}
