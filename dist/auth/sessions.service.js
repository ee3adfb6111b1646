// x-user-token sessions: log in, describe, switch organization, log out.
import * as errors from '../errors.js';
import { findUserByEmail, listActiveMemberships } from '../orgs/users.queries.js';
import { throttledLogin } from './login-throttle.js';
import { verifyPassword } from './passwords.js';
import { deleteSession, findActiveSession, insertSession, updateSessionOrganization } from './sessions.queries.js';
import { generateToken, hashToken } from './tokens.js';
export const SESSION_TTL_SECONDS = 30 * 24 * 3600;
/** The organization a new session is bound to: the one named, else the user's first. */
function chooseOrganization(memberships, requested) {
    if (memberships.length === 0)
        throw new errors.AUTH_NO_ORGANIZATION();
    if (requested === undefined)
        return memberships[0];
    const chosen = memberships.find((m) => m.id === requested);
    if (!chosen)
        throw new errors.AUTH_NOT_A_MEMBER(requested);
    return chosen;
}
export async function issueSession(db, user, organizationId) {
    const organizations = await listActiveMemberships(db, user.id);
    const organization = chooseOrganization(organizations, organizationId);
    const token = generateToken('sbu');
    const expiresAt = new Date(Date.now() + SESSION_TTL_SECONDS * 1000);
    const session = await insertSession(db, { tokenHash: hashToken(token), userId: user.id, organizationId: organization.id, expiresAt });
    return { token, expires_at: session.expires_at, user: { id: user.id, email: user.email, name: user.name }, organization, organizations };
}
/** Unknown email, wrong password and deactivated user all fail the same way, in the same time. */
export async function authenticate(db, email, password) {
    const user = await findUserByEmail(db, email);
    const passwordOk = await verifyPassword(user?.password_hash, password);
    if (!user || !passwordOk || !user.active)
        throw new errors.AUTH_INVALID_CREDENTIALS();
    return user;
}
export async function login(pool, input, clientIp) {
    const user = await throttledLogin(pool, input.email, clientIp, () => authenticate(pool, input.email, input.password));
    return issueSession(pool, user, input.organization_id);
}
export async function resolveSession(db, token) {
    return findActiveSession(db, hashToken(token));
}
export async function describeSession(db, session) {
    const organizations = await listActiveMemberships(db, session.user_id);
    return {
        expires_at: session.expires_at,
        user: { id: session.user_id, email: session.email, name: session.user_name },
        organization: { id: session.organization_id, name: session.organization_name, role: session.role },
        organizations,
    };
}
export async function switchOrganization(db, session, organizationId) {
    const organizations = await listActiveMemberships(db, session.user_id);
    const organization = chooseOrganization(organizations, organizationId);
    await updateSessionOrganization(db, session.session_id, organization.id);
    return {
        expires_at: session.expires_at,
        user: { id: session.user_id, email: session.email, name: session.user_name },
        organization,
        organizations,
    };
}
export function logout(db, session) {
    return deleteSession(db, session.session_id);
}
//# sourceMappingURL=sessions.service.js.map