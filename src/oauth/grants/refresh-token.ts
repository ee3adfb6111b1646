// grant_type=refresh_token (RFC 6749 §6) with rotation (RFC 9700 §4.14.2):
// every refresh returns a new refresh token and marks the presented one rotated.
import { hashToken } from '../../auth/tokens.ts';
import { withTransaction } from '../../db/transaction.ts';
import { REFRESH_TOKEN_CHECKS, runChecks } from '../checks/index.ts';
import { stringParam, type RefreshContext } from '../checks/context.ts';
import { revokeGrant } from '../grants.queries.ts';
import { InvalidGrant, InvalidRequest, OAuthError } from '../oauth.errors.ts';
import { lockRefreshToken, markRefreshTokenRotated } from '../tokens.queries.ts';
import { issueTokenPair, type TokenResponse } from '../tokens.service.ts';
import type { GrantHandler } from './index.ts';

export const handleRefreshToken: GrantHandler = async function handleRefreshToken(pool, ttls, client, params, options) {
  const refreshToken = stringParam(params, 'refresh_token');
  if (refreshToken === undefined) throw new InvalidRequest('refresh_token is required (RFC 6749 §6)');
  const outcome = await withTransaction<TokenResponse | OAuthError>(pool, async (tx) => {
    const record = await lockRefreshToken(tx, hashToken(refreshToken));
    if (!record) return new InvalidGrant('refresh token is unknown (RFC 6749 §5.2)');
    const ctx: RefreshContext = { client, params, token: record, graceSeconds: options.refreshReuseGrace };
    try {
      await runChecks(REFRESH_TOKEN_CHECKS, ctx);
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      if (error.revokeGrant) await revokeGrant(tx, record.grant_id, error.revokeGrant);
      return error;
    }
    await markRefreshTokenRotated(tx, record.id);
    return issueTokenPair(tx, ttls, { grantId: record.grant_id, accessScopes: ctx.scopes!, refreshScopes: record.scopes });
  });
  if (outcome instanceof OAuthError) throw outcome;
  return outcome;
};
