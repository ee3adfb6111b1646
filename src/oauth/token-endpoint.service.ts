// POST /oauth/token and POST /oauth/revoke, behind the route: run the named
// checks, then the grant handler. Never sees request or reply.
import { hashToken, OAUTH_TOKEN_MAX_LENGTH } from '../auth/tokens.ts';
import type { Config } from '../config/config.ts';
import type { Pool } from '../db/pool.ts';
import { REVOCATION_REQUEST_CHECKS, runChecks, TOKEN_REQUEST_CHECKS } from './checks/index.ts';
import { established, stringParam, type RawParams, type TokenRequestContext } from './checks/context.ts';
import type { GrantType } from './checks/check-grant-type.ts';
import { GRANTS } from './grants/index.ts';
import { revokeGrant } from './grants.queries.ts';
import { InvalidRequest } from './oauth.errors.ts';
import { findTokenOwner, revokeAccessToken } from './tokens.queries.ts';
import type { TokenResponse } from './tokens.service.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import type { Caches } from '../cache/caches.ts';
import { tags } from '../cache/tags.ts';

/** `refreshBox` seals a rotated refresh token's successor (the `refreshSuccessors` box of app.ts's buildKeyed). */
export async function exchangeToken(
  pool: Pool,
  config: Config,
  refreshBox: SecretBox,
  params: RawParams,
  authorization: string | undefined,
  caches: Caches,
): Promise<TokenResponse> {
  const ctx: TokenRequestContext = { db: pool, params, authorization, caches, issuer: config.baseUrl };
  await runChecks(TOKEN_REQUEST_CHECKS, ctx);
  const grant = GRANTS[params.grant_type as GrantType];
  return grant(pool, config, established(ctx.client, 'check-client-authentication'), params, {
    refreshReuseGrace: config.refreshReuseGrace,
    secretBox: refreshBox,
    caches,
  });
}

/**
 * RFC 7009 §2.1-2.2: an unknown token is not an error (200). Revoking an access
 * token revokes that token; revoking a refresh token revokes its whole grant,
 * and so every access token issued under it (RFC 7009 §2.1 "SHOULD").
 */
export async function revokeToken(
  pool: Pool,
  params: RawParams,
  authorization: string | undefined,
  caches: Caches,
  issuer: string,
): Promise<void> {
  const ctx: TokenRequestContext = { db: pool, params, authorization, caches, issuer };
  await runChecks(REVOCATION_REQUEST_CHECKS, ctx);
  const token = stringParam(params, 'token');
  if (token === undefined) throw new InvalidRequest('token is required (RFC 7009 §2.1)');
  if (token.length > OAUTH_TOKEN_MAX_LENGTH) return;
  const [owner] = await findTokenOwner(pool, hashToken(token));
  if (!owner) return;
  if (owner.client_id !== established(ctx.client, 'check-client-authentication').client_id) {
    throw new InvalidRequest('client is not authorized to revoke the presented token: it was issued to another client (RFC 7009 §2.1)');
  }
  if (owner.kind === 'access') await revokeAccessToken(pool, owner.id);
  else await revokeGrant(pool, owner.grant_id, 'client_revocation');
  // Committed: this process refuses the token from its next request on.
  caches.evict([tags.grant(owner.grant_id)]);
}
