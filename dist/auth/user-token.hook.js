import * as errors from '../errors.js';
import { resolveSession } from './sessions.service.js';
/** The x-user-token header, or the 401 its absence or length earns; no database involved. */
export function presentedUserToken(request) {
    const token = request.headers['x-user-token'];
    if (typeof token !== 'string' || token.length === 0)
        throw new errors.AUTH_TOKEN_MISSING();
    if (token.length > 256)
        throw new errors.AUTH_TOKEN_INVALID();
    return token;
}
export async function requireUserToken(request) {
    const token = presentedUserToken(request);
    const session = await resolveSession(request.server.db, token);
    if (!session)
        throw new errors.AUTH_TOKEN_INVALID();
    request.principal = {
        kind: 'user',
        userId: session.user_id,
        organizationId: session.organization_id,
        scopes: 'all',
        session,
    };
}
//# sourceMappingURL=user-token.hook.js.map