// grant_type → handler (RFC 6749 §4.1.3, §6). check-grant-type.ts has
// already refused any other grant type.
import type { Pool } from '../../db/pool.ts';
import type { RawParams } from '../checks/context.ts';
import type { GrantType } from '../checks/check-grant-type.ts';
import type { OAuthClientWithSecret } from '../clients.queries.ts';
import type { TokenResponse, TokenTtls } from '../tokens.service.ts';
import type { SecretBox } from '../../crypto/secret-box.ts';
import type { Caches } from '../../cache/caches.ts';
import { handleAuthorizationCode } from './authorization-code.ts';
import { handleRefreshToken } from './refresh-token.ts';

export interface GrantOptions {
  refreshReuseGrace: number;
  secretBox: SecretBox;
  /** Told of a grant a failed check revoked, once committed. */
  caches: Caches;
}

export type GrantHandler = (
  pool: Pool,
  ttls: TokenTtls,
  client: OAuthClientWithSecret,
  params: RawParams,
  options: GrantOptions,
) => Promise<TokenResponse>;

export const GRANTS: Record<GrantType, GrantHandler> = {
  authorization_code: handleAuthorizationCode,
  refresh_token: handleRefreshToken,
};
