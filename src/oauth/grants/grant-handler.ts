// What every grant handler of the token endpoint is (RFC 6749 §4.1.3, §6):
// the client is authenticated, the grant type known; the handler checks the
// grant itself and answers with tokens or an OAuthError.
import type { Pool } from '../../db/pool.ts';
import type { RawParams } from '../checks/context.ts';
import type { OAuthClientWithSecret } from '../clients.queries.ts';
import type { TokenResponse, TokenTtls } from '../tokens.service.ts';
import type { SecretBox } from '../../crypto/secret-box.ts';
import type { Caches } from '../../cache/caches.ts';

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
