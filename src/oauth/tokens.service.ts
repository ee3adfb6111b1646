// Issuing and resolving OAuth tokens. Every token is 256 random bits with a
// kind prefix (sba_ access, sbr_ refresh, sbc_ code), returned once, stored as SHA-256.
import { generateToken, hashToken, OAUTH_TOKEN_MAX_LENGTH } from '../auth/tokens.ts';
import type { Config } from '../config/config.ts';
import type { Queryable } from '../db/pool.ts';
import { readThrough, type Caches, type CacheSlot } from '../cache/caches.ts';
import { tags, type Tag } from '../cache/tags.ts';
import { insertGrant, type Grant } from './grants.queries.ts';
import { formatScope, normalizeScopes } from './scopes.ts';
import { findActiveAccessToken, insertAccessToken, insertRefreshToken, type ActiveAccessToken } from './tokens.queries.ts';

export type TokenTtls = Pick<Config, 'accessTokenTtl' | 'refreshTokenTtl'> & Partial<Pick<Config, 'refreshTokenMaxLifetime'>>;

/** RFC 6749 §5.1 successful response. */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/**
 * A new access token with `accessScopes` and a new refresh token with
 * `refreshScopes`, both in the grant's family. On refresh the two differ when
 * the client narrows the access token's scope: RFC 6749 §6 keeps the refresh
 * token's scope identical to the one it replaces.
 */
export async function issueTokenPair(
  db: Queryable,
  ttls: TokenTtls,
  input: { grantId: string; accessScopes: readonly string[]; refreshScopes: readonly string[] },
): Promise<TokenResponse & { refresh_token_id: string }> {
  const access = await issueAccessToken(db, ttls, { grantId: input.grantId, scopes: input.accessScopes });
  const refreshToken = generateToken('sbr');
  const { id } = await insertRefreshToken(db, {
    tokenHash: hashToken(refreshToken),
    grantId: input.grantId,
    scopes: normalizeScopes(input.refreshScopes),
    expiresAt: new Date(Date.now() + ttls.refreshTokenTtl * 1000),
    ...(ttls.refreshTokenMaxLifetime !== undefined ? { maxLifetimeSeconds: ttls.refreshTokenMaxLifetime } : {}),
  });
  return { ...access, refresh_token: refreshToken, refresh_token_id: id };
}

/** A new access token alone (a grace-period replay gets one beside the chain's current refresh token). */
export async function issueAccessToken(
  db: Queryable,
  ttls: Pick<TokenTtls, 'accessTokenTtl'>,
  input: { grantId: string; scopes: readonly string[] },
): Promise<Omit<TokenResponse, 'refresh_token'>> {
  const accessToken = generateToken('sba');
  const scopes = normalizeScopes(input.scopes);
  await insertAccessToken(db, {
    tokenHash: hashToken(accessToken),
    grantId: input.grantId,
    scopes,
    expiresAt: new Date(Date.now() + ttls.accessTokenTtl * 1000),
  });
  return { access_token: accessToken, token_type: 'Bearer', expires_in: ttls.accessTokenTtl, scope: formatScope(scopes) };
}

/** A grant: the family every code and token of one approval belongs to. */
export function createGrant(
  db: Queryable,
  input: { clientUuid: string; userId: string; organizationId: string; scopes: readonly string[]; resource?: string | null },
): Promise<Grant> {
  return insertGrant(db, {
    clientId: input.clientUuid,
    userId: input.userId,
    organizationId: input.organizationId,
    scopes: normalizeScopes(input.scopes),
    resource: input.resource ?? null,
  });
}

/**
 * Access tokens in the process caches, by the SHA-256 (hex) of the token:
 * what PostgreSQL answered for a valid one, the client's secret hash
 * included. The expiry is checked on every use; the client and scope checks
 * run on every request either way (platform-guard.ts).
 */
export const ACCESS_TOKENS: CacheSlot<ActiveAccessToken> = {
  cache: 'access_tokens',
  usable: (active) => active.expires_at.getTime() > Date.now(),
};

/** The tags of an access token's principal: any of them changing ends it. */
export function accessTokenTags(active: Pick<ActiveAccessToken, 'grant_id' | 'user_id' | 'organization_id' | 'client_id'>): Tag[] {
  return [tags.grant(active.grant_id), tags.user(active.user_id), tags.org(active.organization_id), tags.client(active.client_id)];
}

/** The active token behind a bearer credential, or undefined (unknown, expired, revoked, deactivated). */
export function resolveAccessToken(db: Queryable, caches: Caches, accessToken: string): Promise<ActiveAccessToken | undefined> {
  if (accessToken.length === 0 || accessToken.length > OAUTH_TOKEN_MAX_LENGTH) return Promise.resolve(undefined);
  const tokenHash = hashToken(accessToken);
  return readThrough(caches, ACCESS_TOKENS, tokenHash.toString('hex'), () => findActiveAccessToken(db, tokenHash), accessTokenTags);
}
