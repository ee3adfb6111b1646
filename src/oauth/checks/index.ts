// Which protocol rules run, and in which order, for each endpoint: one list
// per pipeline, so the order is reviewed here and nowhere else. Each rule is
// its own check-*.ts / reject-*.ts citing its RFC section.
import { checkClient } from './check-client.ts';
import { checkClientAuthentication } from './check-client-authentication.ts';
import { checkCodeClient } from './check-code-client.ts';
import { checkCodeExpiry } from './check-code-expiry.ts';
import { checkCodeRedirectUri } from './check-code-redirect-uri.ts';
import { checkCodeReplay } from './check-code-replay.ts';
import { checkGrantActive } from './check-grant-active.ts';
import { checkGrantType } from './check-grant-type.ts';
import { checkPkce } from './check-pkce.ts';
import { checkPkceVerifier } from './check-pkce-verifier.ts';
import { checkPublicClientPkce } from './check-public-client-pkce.ts';
import { checkRedirectUri } from './check-redirect-uri.ts';
import { checkRefreshScope } from './check-refresh-scope.ts';
import { checkRefreshTokenClient } from './check-refresh-token-client.ts';
import { checkRefreshTokenExpiry } from './check-refresh-token-expiry.ts';
import { checkRefreshTokenReuse } from './check-refresh-token-reuse.ts';
import { checkResource } from './check-resource.ts';
import { checkResponseType } from './check-response-type.ts';
import { checkScope } from './check-scope.ts';
import { checkTokenResource } from './check-token-resource.ts';
import type { AuthorizationCheck, CodeExchangeCheck, RefreshCheck, TokenRequestCheck } from './context.ts';
import { rejectDuplicateParameters } from './reject-duplicate-parameters.ts';

/**
 * GET/POST /oauth/authorize. Until check-redirect-uri has passed, a failure is
 * shown on an error page; after it, failures are redirected to the client.
 */
export const AUTHORIZATION_CHECKS: readonly AuthorizationCheck[] = [
  checkClient,
  checkRedirectUri,
  rejectDuplicateParameters,
  checkResponseType,
  checkScope,
  checkPkce,
  checkPublicClientPkce,
  checkResource,
];

/** POST /oauth/token, before the grant type's own checks. */
export const TOKEN_REQUEST_CHECKS: readonly TokenRequestCheck[] = [
  rejectDuplicateParameters,
  checkGrantType,
  checkClientAuthentication,
  checkTokenResource,
];

/** POST /oauth/revoke (RFC 7009 §2.1: the client authenticates first). */
export const REVOCATION_REQUEST_CHECKS: readonly TokenRequestCheck[] = [rejectDuplicateParameters, checkClientAuthentication];

/** grant_type=authorization_code, on the locked code row. Replay comes first: it must revoke even an expired code's tokens. */
export const AUTHORIZATION_CODE_CHECKS: readonly CodeExchangeCheck[] = [
  checkCodeReplay,
  checkCodeExpiry,
  checkCodeClient,
  checkCodeRedirectUri,
  checkPkceVerifier,
  checkGrantActive,
];

/** grant_type=refresh_token, on the locked refresh token row. The client check comes first so another client cannot trigger a revocation. */
export const REFRESH_TOKEN_CHECKS: readonly RefreshCheck[] = [
  checkRefreshTokenClient,
  checkRefreshTokenExpiry,
  checkGrantActive,
  checkRefreshTokenReuse,
  checkRefreshScope,
];

export async function runChecks<C>(checks: readonly ((ctx: C) => void | Promise<void>)[], ctx: C): Promise<void> {
  for (const check of checks) await check(ctx);
}
