// grant_type → handler (RFC 6749 §4.1.3, §6). check-grant-type.ts has
// already refused any other grant type.
import type { GrantType } from '../checks/check-grant-type.ts';
import { handleAuthorizationCode } from './authorization-code.ts';
import type { GrantHandler } from './grant-handler.ts';
import { handleRefreshToken } from './refresh-token.ts';

export const GRANTS: Record<GrantType, GrantHandler> = {
  authorization_code: handleAuthorizationCode,
  refresh_token: handleRefreshToken,
};
