// Issuing and resolving OAuth tokens. Every token is 256 random bits with a
// kind prefix (sba_ access, sbr_ refresh, sbc_ code), returned once, stored as SHA-256.
import { generateToken, hashToken } from '../auth/tokens.js';
import { insertGrant } from './grants.queries.js';
import { formatScope, normalizeScopes } from './scopes.js';
import { findActiveAccessToken, insertAccessToken, insertRefreshToken } from './tokens.queries.js';
/**
 * A new access token with `accessScopes` and a new refresh token with
 * `refreshScopes`, both in the grant's family. On refresh the two differ when
 * the client narrows the access token's scope: RFC 6749 §6 keeps the refresh
 * token's scope identical to the one it replaces.
 */
export async function issueTokenPair(db, ttls, input) {
    const accessToken = generateToken('sba');
    const refreshToken = generateToken('sbr');
    const now = Date.now();
    const accessScopes = normalizeScopes(input.accessScopes);
    await insertAccessToken(db, {
        tokenHash: hashToken(accessToken),
        grantId: input.grantId,
        scopes: accessScopes,
        expiresAt: new Date(now + ttls.accessTokenTtl * 1000),
    });
    await insertRefreshToken(db, {
        tokenHash: hashToken(refreshToken),
        grantId: input.grantId,
        scopes: normalizeScopes(input.refreshScopes),
        expiresAt: new Date(now + ttls.refreshTokenTtl * 1000),
    });
    return {
        access_token: accessToken,
        token_type: 'Bearer',
        expires_in: ttls.accessTokenTtl,
        refresh_token: refreshToken,
        scope: formatScope(accessScopes),
    };
}
/** A grant: the family every code and token of one approval belongs to. */
export function createGrant(db, input) {
    return insertGrant(db, {
        clientId: input.clientUuid,
        userId: input.userId,
        organizationId: input.organizationId,
        scopes: normalizeScopes(input.scopes),
    });
}
/** The active token behind a bearer credential, or undefined (unknown, expired, revoked, deactivated). */
export function resolveAccessToken(db, accessToken) {
    // Our tokens are 47 characters; anything far longer is not one of ours and is not worth hashing.
    if (accessToken.length === 0 || accessToken.length > 512)
        return Promise.resolve(undefined);
    return findActiveAccessToken(db, hashToken(accessToken));
}
//# sourceMappingURL=tokens.service.js.map