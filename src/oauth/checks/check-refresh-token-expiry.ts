// RFC 6749 §6: an expired or revoked refresh token is invalid_grant. Expired
// means past its own expiry (REFRESH_TOKEN_TTL, sliding with each rotation) or
// its grant older than REFRESH_TOKEN_MAX_LIFETIME (absolute: the user approves
// the client again at least that often).
import { InvalidGrant } from '../oauth.errors.ts';
import type { RefreshCheck } from './context.ts';

export const checkRefreshTokenExpiry: RefreshCheck = function checkRefreshTokenExpiry(ctx) {
  if (ctx.token.revoked) throw new InvalidGrant('refresh token has been revoked (RFC 7009 §2)');
  if (ctx.token.expired) throw new InvalidGrant('refresh token is expired (RFC 6749 §6)');
  if (ctx.maxLifetimeSeconds !== undefined && ctx.token.grant_age_seconds >= ctx.maxLifetimeSeconds) {
    throw new InvalidGrant(
      'refresh token is expired: the authorization is older than its maximum lifetime; the user must approve the client again (RFC 6749 §6)',
    );
  }
};
