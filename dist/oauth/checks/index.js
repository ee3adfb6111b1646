// Which protocol rules run, and in which order, for each endpoint: one list
// per pipeline, so the order is reviewed here and nowhere else. Each rule is
// its own check-*.ts / reject-*.ts citing its RFC section.
import { checkClient } from './check-client.js';
import { checkClientAuthentication } from './check-client-authentication.js';
import { checkCodeClient } from './check-code-client.js';
import { checkCodeExpiry } from './check-code-expiry.js';
import { checkCodeRedirectUri } from './check-code-redirect-uri.js';
import { checkCodeReplay } from './check-code-replay.js';
import { checkGrantActive } from './check-grant-active.js';
import { checkGrantType } from './check-grant-type.js';
import { checkPkce } from './check-pkce.js';
import { checkPkceVerifier } from './check-pkce-verifier.js';
import { checkRedirectUri } from './check-redirect-uri.js';
import { checkRefreshScope } from './check-refresh-scope.js';
import { checkRefreshTokenClient } from './check-refresh-token-client.js';
import { checkRefreshTokenExpiry } from './check-refresh-token-expiry.js';
import { checkRefreshTokenReuse } from './check-refresh-token-reuse.js';
import { checkResponseType } from './check-response-type.js';
import { checkScope } from './check-scope.js';
import { rejectDuplicateParameters } from './reject-duplicate-parameters.js';
/**
 * GET/POST /oauth/authorize. Until check-redirect-uri has passed, a failure is
 * shown on an error page; after it, failures are redirected to the client.
 */
export const AUTHORIZATION_CHECKS = [
    checkClient,
    checkRedirectUri,
    rejectDuplicateParameters,
    checkResponseType,
    checkScope,
    checkPkce,
];
/** POST /oauth/token, before the grant type's own checks. */
export const TOKEN_REQUEST_CHECKS = [
    rejectDuplicateParameters,
    checkGrantType,
    checkClientAuthentication,
];
/** POST /oauth/revoke (RFC 7009 §2.1: the client authenticates first). */
export const REVOCATION_REQUEST_CHECKS = [
    rejectDuplicateParameters,
    checkClientAuthentication,
];
/** grant_type=authorization_code, on the locked code row. Replay comes first: it must revoke even an expired code's tokens. */
export const AUTHORIZATION_CODE_CHECKS = [
    checkCodeReplay,
    checkCodeExpiry,
    checkCodeClient,
    checkCodeRedirectUri,
    checkPkceVerifier,
    checkGrantActive,
];
/** grant_type=refresh_token, on the locked refresh token row. The client check comes first so another client cannot trigger a revocation. */
export const REFRESH_TOKEN_CHECKS = [
    checkRefreshTokenClient,
    checkRefreshTokenExpiry,
    checkGrantActive,
    checkRefreshTokenReuse,
    checkRefreshScope,
];
export async function runChecks(checks, ctx) {
    for (const check of checks)
        await check(ctx);
}
//# sourceMappingURL=index.js.map