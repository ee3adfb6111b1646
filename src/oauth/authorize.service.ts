// The authorization endpoint's logic (RFC 6749 §4.1.1-4.1.2): validate the
// request through the named checks, issue a code bound to everything it must
// be bound to, and build the redirect back to the client (with iss, RFC 9207).
import { generateToken, hashToken } from '../auth/tokens.ts';
import type { Config } from '../config/config.ts';
import type { Pool, Queryable } from '../db/pool.ts';
import { withTransaction } from '../db/transaction.ts';
import { AUTHORIZATION_CHECKS, runChecks } from './checks/index.ts';
import { established, type AuthorizationContext, type RawParams } from './checks/context.ts';
import type { OAuthClientWithSecret } from './clients.queries.ts';
import { insertAuthorizationCode } from './grants.queries.ts';
import { OAuthError } from './oauth.errors.ts';
import { createGrant } from './tokens.service.ts';

/** The parameters the consent form carries through unchanged. */
export const AUTHORIZATION_PARAMETERS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
  'resource',
] as const;

export interface ValidAuthorizationRequest {
  client: OAuthClientWithSecret;
  redirectUri: string;
  redirectUriGiven: boolean;
  scopes: string[];
  codeChallenge: string | null;
  /** RFC 8707: what the grant's tokens are bound to (null: the platform routes). */
  resource: string | null;
  state: string | undefined;
  /** The request's own parameters (single text values), to carry through the consent form. */
  params: Record<string, string>;
}

export type AuthorizationValidation =
  | { ok: true; request: ValidAuthorizationRequest }
  /** redirectUri is set when the failure may be redirected to the client; otherwise it is shown on a page. */
  | { ok: false; error: OAuthError; redirectUri: string | undefined; state: string | undefined };

export async function validateAuthorizationRequest(
  db: Queryable,
  params: RawParams,
  options: Pick<AuthorizationContext, 'issuer' | 'documents'>,
): Promise<AuthorizationValidation> {
  const state = typeof params.state === 'string' && params.state !== '' ? params.state : undefined;
  const ctx: AuthorizationContext = { db, params, ...options };
  try {
    await runChecks(AUTHORIZATION_CHECKS, ctx);
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    return { ok: false, error, redirectUri: ctx.redirectUri, state };
  }
  const carried: Record<string, string> = {};
  for (const name of AUTHORIZATION_PARAMETERS) {
    const value = params[name];
    if (typeof value === 'string' && value !== '') carried[name] = value;
  }
  return {
    ok: true,
    request: {
      client: established(ctx.client, 'check-client'),
      redirectUri: established(ctx.redirectUri, 'check-redirect-uri'),
      redirectUriGiven: established(ctx.redirectUriGiven, 'check-redirect-uri'),
      scopes: established(ctx.scopes, 'check-scope'),
      codeChallenge: ctx.codeChallenge ?? null,
      resource: established(ctx.resource, 'check-resource'),
      state,
      params: carried,
    },
  };
}

/** A new grant and its single-use code, bound to client, redirect URI, user, organization, scopes and challenge. */
export async function issueAuthorizationCode(
  pool: Pool,
  config: Pick<Config, 'authCodeTtl'>,
  request: ValidAuthorizationRequest,
  principal: { userId: string; organizationId: string },
): Promise<string> {
  const code = generateToken('sbc');
  await withTransaction(pool, async (tx) => {
    const grant = await createGrant(tx, {
      clientUuid: request.client.id,
      userId: principal.userId,
      organizationId: principal.organizationId,
      scopes: request.scopes,
      resource: request.resource,
    });
    await insertAuthorizationCode(tx, {
      codeHash: hashToken(code),
      grantId: grant.id,
      redirectUri: request.redirectUri,
      redirectUriGiven: request.redirectUriGiven,
      codeChallenge: request.codeChallenge,
      expiresAt: new Date(Date.now() + config.authCodeTtl * 1000),
    });
  });
  return code;
}

/**
 * The redirect back to the client: the registered URI with its own query kept
 * (RFC 6749 §3.1.2) and the response parameters added, always with iss (RFC 9207 §2).
 */
export function authorizationResponseUrl(redirectUri: string, issuer: string, values: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(values)) {
    if (value !== undefined) url.searchParams.append(name, value);
  }
  url.searchParams.append('iss', issuer);
  return url.toString();
}
