// GET /calls/recent for a platform: the access token's principal and its
// organization's recent call.completed events, read in one statement and kept
// in the process caches, then held to the platform guard's checks.
import { hashToken, OAUTH_TOKEN_MAX_LENGTH } from '../auth/tokens.ts';
import type { Pool } from '../db/pool.ts';
import { readPrincipalAndBody, type Caches, type OrganizationBody, type PrincipalAndBody } from '../cache/caches.ts';
import { tags } from '../cache/tags.ts';
import { checkPlatformAccess, type PlatformCredentials, type PlatformRefusal } from '../oauth/platform-guard.ts';
import type { ActiveAccessToken } from '../oauth/tokens.queries.ts';
import { ACCESS_TOKENS, accessTokenTags } from '../oauth/tokens.service.ts';
import { readRecentCallsForToken, type CallFiltersObject } from './calls.queries.ts';

/** /calls/recent's query: the limit and the trigger's filters. */
export interface RecentCallsRequest {
  limit: number;
  filters: CallFiltersObject;
  baseUrl: string;
}

/** /calls/recent bodies in the process caches, by organization, limit and filters: what that organization's row-level-security-bound read wrote. */
function recentCallsBody(request: RecentCallsRequest): OrganizationBody {
  const { direction, location_id, agent_id, min_duration_seconds } = request.filters;
  const filters = [direction, location_id, agent_id, min_duration_seconds].map((f) => f ?? '').join(':');
  return {
    slot: { cache: 'reads' },
    key: (organizationId) => `recent:${organizationId}:${request.limit}:${filters}`,
    tags: (organizationId) => [tags.calls(organizationId), tags.org(organizationId)],
  };
}

/** GET /calls/recent: the token's principal and the calls, or the first of the platform guard's checks the credentials fail. */
export type RecentCallsAnswer = { outcome: 'ok'; active: ActiveAccessToken; body: string } | { outcome: PlatformRefusal };

/** The token's principal and its organization's body (readPrincipalAndBody, over readRecentCallsForToken). */
function principalAndCalls(
  pool: Pool,
  caches: Caches,
  tokenHash: Buffer,
  request: RecentCallsRequest,
): Promise<PrincipalAndBody<ActiveAccessToken> | undefined> {
  const principal = { slot: ACCESS_TOKENS, key: tokenHash.toString('hex'), tags: accessTokenTags };
  return readPrincipalAndBody(caches, principal, recentCallsBody(request), () => readRecentCallsForToken(pool, tokenHash, request));
}

/**
 * GET /calls/recent for a platform: the guard's own checks
 * (checkPlatformAccess) on the token's principal, read with the calls; the
 * body is the JSON text PostgreSQL wrote.
 */
export async function recentCallsForPlatform(
  pool: Pool,
  caches: Caches,
  credentials: PlatformCredentials,
  scope: string,
  request: RecentCallsRequest,
): Promise<RecentCallsAnswer> {
  if (credentials.token.length > OAUTH_TOKEN_MAX_LENGTH) return { outcome: 'token_invalid' };
  const found = await principalAndCalls(pool, caches, hashToken(credentials.token), request);
  const access = checkPlatformAccess(found?.principal, credentials, scope);
  return access.ok ? { outcome: 'ok', active: access.active, body: found!.body } : { outcome: access.refusal };
}
