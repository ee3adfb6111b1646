// x-user-token sessions: log in, describe, switch organization, log out.
import * as errors from '../errors.ts';
import type { Pool, Queryable } from '../db/pool.ts';
import { findUserByEmail, listActiveMemberships, type OrganizationMembership } from '../organizations/users.queries.ts';
import { readThrough, type Caches, type CacheSlot } from '../cache/caches.ts';
import { tags, type Tag } from '../cache/tags.ts';
import { throttledLogin } from './login-throttle.ts';
import { verifyPassword } from '../organizations/passwords.ts';
import { deleteSession, findActiveSession, insertSession, updateSessionOrganization, type ActiveSession } from './sessions.queries.ts';
import { generateToken, hashToken } from './tokens.ts';

export const SESSION_TTL_SECONDS = 30 * 24 * 3600;

export interface SessionView {
  expires_at: Date;
  user: { id: string; email: string; name: string | null };
  organization: OrganizationMembership;
  organizations: OrganizationMembership[];
}

export interface IssuedSession extends SessionView {
  token: string;
}

/** The organization a new session is bound to: the one named, else the user's first. */
function chooseOrganization(memberships: OrganizationMembership[], requested: string | undefined): OrganizationMembership {
  if (memberships.length === 0) throw new errors.AUTH_NO_ORGANIZATION();
  if (requested === undefined) return memberships[0]!;
  const chosen = memberships.find((m) => m.id === requested);
  if (!chosen) throw new errors.AUTH_NOT_A_MEMBER(requested);
  return chosen;
}

export async function issueSession(
  db: Queryable,
  user: { id: string; email: string; name: string | null },
  organizationId?: string,
): Promise<IssuedSession> {
  const organizations = await listActiveMemberships(db, user.id);
  const organization = chooseOrganization(organizations, organizationId);
  const token = generateToken('sbu');
  const expiresAt = new Date(Date.now() + SESSION_TTL_SECONDS * 1000);
  const session = await insertSession(db, { tokenHash: hashToken(token), userId: user.id, organizationId: organization.id, expiresAt });
  return { token, expires_at: session.expires_at, user: { id: user.id, email: user.email, name: user.name }, organization, organizations };
}

/** Unknown email, wrong password and deactivated user all fail the same way, in the same time. */
export async function authenticate(db: Queryable, email: string, password: string) {
  const user = await findUserByEmail(db, email);
  const passwordOk = await verifyPassword(user?.password_hash, password);
  if (!user || !passwordOk || !user.active) throw new errors.AUTH_INVALID_CREDENTIALS();
  return user;
}

export async function login(
  pool: Pool,
  input: { email: string; password: string; organization_id?: string },
  clientIp: string,
): Promise<IssuedSession> {
  const user = await throttledLogin(pool, input.email, clientIp, () => authenticate(pool, input.email, input.password));
  return issueSession(pool, user, input.organization_id);
}

/** Sessions in the process caches, by the SHA-256 (hex) of the token; the expiry is checked on every use. */
export const SESSIONS: CacheSlot<ActiveSession> = { cache: 'sessions', usable: (session) => session.expires_at.getTime() > Date.now() };

/** The tags of a session's principal: any of them changing ends it. */
export function sessionTags(session: Pick<ActiveSession, 'session_id' | 'user_id' | 'organization_id'>): Tag[] {
  return [tags.session(session.session_id), tags.user(session.user_id), tags.org(session.organization_id)];
}

export function resolveSession(db: Queryable, caches: Caches, token: string): Promise<ActiveSession | undefined> {
  return resolveSessionByHash(db, caches, hashToken(token));
}

/** resolveSession for a token already hashed (the x-user-token, hashed once per request: user-token.hook.ts). */
export function resolveSessionByHash(db: Queryable, caches: Caches, tokenHash: Buffer): Promise<ActiveSession | undefined> {
  return readThrough(caches, SESSIONS, tokenHash.toString('hex'), () => findActiveSession(db, tokenHash), sessionTags);
}

export async function describeSession(db: Queryable, session: ActiveSession): Promise<SessionView> {
  const organizations = await listActiveMemberships(db, session.user_id);
  return {
    expires_at: session.expires_at,
    user: { id: session.user_id, email: session.email, name: session.user_name },
    organization: { id: session.organization_id, name: session.organization_name, role: session.role },
    organizations,
  };
}

export async function switchOrganization(
  db: Queryable,
  caches: Caches,
  session: ActiveSession,
  organizationId: string,
): Promise<SessionView> {
  const organizations = await listActiveMemberships(db, session.user_id);
  const organization = chooseOrganization(organizations, organizationId);
  await updateSessionOrganization(db, session.session_id, organization.id);
  caches.evict([tags.session(session.session_id)]);
  return {
    expires_at: session.expires_at,
    user: { id: session.user_id, email: session.email, name: session.user_name },
    organization,
    organizations,
  };
}

export async function logout(db: Queryable, caches: Caches, session: ActiveSession): Promise<void> {
  await deleteSession(db, session.session_id);
  caches.evict([tags.session(session.session_id)]);
}
