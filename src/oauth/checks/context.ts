// What the checks look at. A check either throws an OAuthError naming the rule
// (with its RFC section) or returns, possibly after filling in the context.
import type { Caches } from '../../cache/caches.ts';
import type { Queryable } from '../../db/pool.ts';
import type { OAuthClientWithSecret } from '../clients.queries.ts';
import type { DocumentOptions } from '../public-clients/metadata-documents.service.ts';
import type { AuthorizationCode } from '../grants.queries.ts';
import type { RefreshTokenRecord } from '../tokens.queries.ts';

/** Parsed query or body: a repeated parameter arrives as an array. */
export type RawParams = Record<string, unknown>;

/** The parameter's value when it was sent exactly once as text; undefined when absent or empty. */
export function stringParam(params: RawParams, name: string): string | undefined {
  const value = params[name];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/**
 * A value of the context that an earlier check fills in (`setBy` names it).
 * The checks run in the order of checks/index.ts; a value missing here means
 * that order is broken (a bug, answered 500), never a bad request.
 */
export function established<T>(value: T | undefined, setBy: string): T {
  if (value === undefined) throw new Error(`${setBy} has not run before this step: the check order in checks/index.ts is broken`);
  return value;
}

export interface AuthorizationContext {
  db: Queryable;
  params: RawParams;
  /** BASE_URL: the issuer, and the root of the one protected resource, `{issuer}/mcp`. */
  issuer: string;
  /** How metadata documents are fetched; undefined when OAUTH_CLIENT_METADATA_DOCUMENTS is off. */
  documents: DocumentOptions | undefined;
  client?: OAuthClientWithSecret;
  /** Set by check-resource: what the grant's tokens will be bound to (null: the platform routes). */
  resource?: string | null;
  /** Set once the redirect URI is known to be registered: from then on errors are redirected to it. */
  redirectUri?: string;
  redirectUriGiven?: boolean;
  scopes?: string[];
  codeChallenge?: string | null;
}

export type AuthorizationCheck = (ctx: AuthorizationContext) => void | Promise<void>;

export interface TokenRequestContext {
  db: Queryable;
  params: RawParams;
  /** The Authorization request header, for HTTP Basic client authentication. */
  authorization: string | undefined;
  /** Where registered clients are looked up first (clients.service.ts CLIENTS). */
  caches: Caches;
  /** BASE_URL (check-token-resource). */
  issuer: string;
  client?: OAuthClientWithSecret;
}

export type TokenRequestCheck = (ctx: TokenRequestContext) => void | Promise<void>;

export interface CodeExchangeContext {
  client: OAuthClientWithSecret;
  params: RawParams;
  code: AuthorizationCode;
}

export type CodeExchangeCheck = (ctx: CodeExchangeContext) => void;

export interface RefreshContext {
  client: OAuthClientWithSecret;
  params: RawParams;
  token: RefreshTokenRecord;
  /** REFRESH_REUSE_GRACE in seconds. */
  graceSeconds: number;
  /** REFRESH_TOKEN_MAX_LIFETIME in seconds (absent: no cap). */
  maxLifetimeSeconds?: number;
  /** Set by check-refresh-scope: the access token's scope (the refresh token's, or narrower). */
  scopes?: string[];
}

export type RefreshCheck = (ctx: RefreshContext) => void;
