// The authorization endpoint's logic (RFC 6749 §4.1.1-4.1.2): validate the
// request through the named checks, issue a code bound to everything it must
// be bound to, and build the redirect back to the client (with iss, RFC 9207).
import { generateToken, hashToken } from '../auth/tokens.js';
import { withTransaction } from '../db/transaction.js';
import { AUTHORIZATION_CHECKS, runChecks } from './checks/index.js';
import { insertAuthorizationCode } from './grants.queries.js';
import { OAuthError } from './oauth.errors.js';
import { createGrant } from './tokens.service.js';
/** The parameters the consent form carries through unchanged. */
export const AUTHORIZATION_PARAMETERS = [
    'response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method',
];
export async function validateAuthorizationRequest(db, params) {
    const state = typeof params.state === 'string' && params.state !== '' ? params.state : undefined;
    const ctx = { db, params };
    try {
        await runChecks(AUTHORIZATION_CHECKS, ctx);
    }
    catch (error) {
        if (!(error instanceof OAuthError))
            throw error;
        return { ok: false, error, redirectUri: ctx.redirectUri, state };
    }
    const carried = {};
    for (const name of AUTHORIZATION_PARAMETERS) {
        const value = params[name];
        if (typeof value === 'string' && value !== '')
            carried[name] = value;
    }
    return {
        ok: true,
        request: {
            client: ctx.client,
            redirectUri: ctx.redirectUri,
            redirectUriGiven: ctx.redirectUriGiven,
            scopes: ctx.scopes,
            codeChallenge: ctx.codeChallenge ?? null,
            state,
            params: carried,
        },
    };
}
/** A new grant and its single-use code, bound to client, redirect URI, user, organization, scopes and challenge. */
export async function issueAuthorizationCode(pool, config, request, principal) {
    const code = generateToken('sbc');
    await withTransaction(pool, async (tx) => {
        const grant = await createGrant(tx, {
            clientUuid: request.client.id,
            userId: principal.userId,
            organizationId: principal.organizationId,
            scopes: request.scopes,
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
export function authorizationResponseUrl(redirectUri, issuer, values) {
    const url = new URL(redirectUri);
    for (const [name, value] of Object.entries(values)) {
        if (value !== undefined)
            url.searchParams.append(name, value);
    }
    url.searchParams.append('iss', issuer);
    return url.toString();
}
//# sourceMappingURL=authorize.service.js.map