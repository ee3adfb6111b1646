// POST /oauth/token and POST /oauth/revoke, behind the route: run the named
// checks, then the grant handler. Never sees request or reply.
import { hashToken } from '../auth/tokens.js';
import { REVOCATION_REQUEST_CHECKS, runChecks, TOKEN_REQUEST_CHECKS } from './checks/index.js';
import { stringParam } from './checks/context.js';
import { GRANTS } from './grants/index.js';
import { revokeGrant } from './grants.queries.js';
import { InvalidRequest } from './oauth.errors.js';
import { findTokenOwner, revokeAccessToken } from './tokens.queries.js';
export async function exchangeToken(pool, config, params, authorization) {
    const ctx = { db: pool, params, authorization };
    await runChecks(TOKEN_REQUEST_CHECKS, ctx);
    const grant = GRANTS[params.grant_type];
    return grant(pool, config, ctx.client, params, { refreshReuseGrace: config.refreshReuseGrace });
}
/**
 * RFC 7009 §2.1-2.2: an unknown token is not an error (200). Revoking an access
 * token revokes that token; revoking a refresh token revokes its whole grant,
 * and so every access token issued under it (RFC 7009 §2.1 "SHOULD").
 */
export async function revokeToken(pool, params, authorization) {
    const ctx = { db: pool, params, authorization };
    await runChecks(REVOCATION_REQUEST_CHECKS, ctx);
    const token = stringParam(params, 'token');
    if (token === undefined)
        throw new InvalidRequest('token is required (RFC 7009 §2.1)');
    if (token.length > 512)
        return;
    const [owner] = await findTokenOwner(pool, hashToken(token));
    if (!owner)
        return;
    if (owner.client_id !== ctx.client.client_id) {
        throw new InvalidRequest('client is not authorized to revoke the presented token: it was issued to another client (RFC 7009 §2.1)');
    }
    if (owner.kind === 'access')
        await revokeAccessToken(pool, owner.id);
    else
        await revokeGrant(pool, owner.grant_id, 'client_revocation');
}
//# sourceMappingURL=token.service.js.map