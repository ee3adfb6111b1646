import * as errors from '../errors.js';
import { secretMatches } from './clients.service.js';
import { errorDescription } from './oauth.errors.js';
import { resolveAccessToken } from './tokens.service.js';
export const REALM = 'switchboard';
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
/** The token from `Authorization: Bearer <token>`, or undefined when absent or not a Bearer credential. */
export function bearerToken(request) {
    const header = request.headers.authorization;
    if (typeof header !== 'string')
        return undefined;
    return BEARER.exec(header)?.[1];
}
function quoted(value) {
    return `"${errorDescription(value)}"`;
}
/** RFC 6750 §3: the challenge; with no error code when no credentials were sent at all (§3.1). */
/** OpenAPI security requirement of the platform routes: all three headers at once (interface §5.1). */
export const PLATFORM_SECURITY = [{ bearer: [], clientId: [], clientSecret: [] }];
export function bearerChallenge(error) {
    const parts = [`Bearer realm=${quoted(REALM)}`];
    if (error) {
        parts.push(`error=${quoted(error.code)}`, `error_description=${quoted(error.description)}`);
        if (error.scope)
            parts.push(`scope=${quoted(error.scope)}`);
    }
    return parts.join(', ');
}
function fail(reply, error, oauthError, scope) {
    reply.header('www-authenticate', bearerChallenge(oauthError ? { code: oauthError, description: error.message, ...(scope ? { scope } : {}) } : undefined));
    reply.header('cache-control', 'no-store');
    if (oauthError)
        error.oauthError = oauthError;
    throw error;
}
function header(request, name) {
    const value = request.headers[name];
    return typeof value === 'string' && value.length > 0 ? value : undefined;
}
/** The three headers, or the 401 their absence or shape earns; no database involved. */
export function platformCredentials(request, reply) {
    const token = bearerToken(request);
    if (token === undefined) {
        // A credential in the wrong shape is an invalid token; no credential at all gets a bare challenge.
        return fail(reply, new errors.OAUTH_TOKEN_MISSING(), request.headers.authorization ? 'invalid_token' : undefined);
    }
    const clientId = header(request, 'x-client-id');
    const clientSecret = header(request, 'x-client-secret');
    if (clientId === undefined || clientSecret === undefined) {
        return fail(reply, new errors.OAUTH_CLIENT_MISSING(), 'invalid_token');
    }
    return { token, clientId, clientSecret };
}
/** The answer to platform credentials that did not verify, in the order the guard checks them. */
export function refusePlatform(reply, refusal, scope) {
    if (refusal === 'token_invalid')
        return fail(reply, new errors.OAUTH_TOKEN_INVALID(), 'invalid_token');
    if (refusal === 'client_invalid')
        return fail(reply, new errors.OAUTH_CLIENT_INVALID(), 'invalid_token');
    return fail(reply, new errors.OAUTH_INSUFFICIENT_SCOPE(scope), 'insufficient_scope', scope);
}
/**
 * A Fastify preHandler for a platform endpoint that needs `scope`. On success
 * it sets request.principal = {kind: 'oauth', userId, organizationId, scopes, clientId}.
 * (GET /calls/recent checks the same credentials inside its one statement instead.)
 */
export function requirePlatformToken(scope) {
    return async function platformGuard(request, reply) {
        const { token, clientId, clientSecret } = platformCredentials(request, reply);
        const active = await resolveAccessToken(request.server.db, token);
        if (!active)
            return refusePlatform(reply, 'token_invalid', scope);
        // Both checks always run so a wrong id and a wrong secret cost the same.
        const secretOk = clientSecret.length <= 500 && secretMatches(active.client_secret_hash, clientSecret);
        if (active.client_id !== clientId || !secretOk)
            return refusePlatform(reply, 'client_invalid', scope);
        authorize(request, reply, active, scope);
    };
}
/** The scope check shared by both guards, then the principal the token stands for. */
function authorize(request, reply, active, scope) {
    if (!active.scopes.includes(scope))
        fail(reply, new errors.OAUTH_INSUFFICIENT_SCOPE(scope), 'insufficient_scope', scope);
    request.principal = {
        kind: 'oauth',
        userId: active.user_id,
        organizationId: active.organization_id,
        scopes: active.scopes,
        clientId: active.client_id,
        grantId: active.grant_id,
    };
}
//# sourceMappingURL=platform-guard.js.map