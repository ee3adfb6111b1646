// RFC 9700 §4.14.2 refresh token rotation: each refresh returns a new refresh
// token. The one it replaced keeps working for REFRESH_REUSE_GRACE seconds (a
// platform may retry a lost response); used after that, it signals theft, and
// the whole grant (every token of the family) is revoked.
import { InvalidGrant } from '../oauth.errors.ts';
import type { RefreshCheck } from './context.ts';

export const checkRefreshTokenReuse: RefreshCheck = function checkRefreshTokenReuse(ctx) {
  const since = ctx.token.rotated_seconds_ago;
  if (since === null || since <= ctx.graceSeconds) return;
  const error = new InvalidGrant(
    'refresh token was already rotated and reused after the grace period; the grant is revoked (RFC 9700 §4.14.2)',
  );
  error.revokeGrant = 'refresh_reuse';
  throw error;
};
