import type { Queryable } from '../db/pool.ts';

export type Role = 'owner' | 'admin' | 'member';

/** The longest email address (RFC 5321's path limit; a CHECK in SQL too). */
export const EMAIL_MAX_LENGTH = 254;

export interface User {
  id: string;
  email: string;
  name: string | null;
  active: boolean;
  created_at: Date;
}

export interface UserWithPassword extends User {
  password_hash: string;
}

/** Who a web session or an access token stands for, as the reads that check them return it. */
export interface UserInOrganization {
  user_id: string;
  email: string;
  user_name: string | null;
  organization_id: string;
  organization_name: string;
}

export interface OrganizationMembership {
  id: string;
  name: string;
  role: Role;
}

const COLUMNS = 'id, email, name, active, created_at';

export async function insertUser(db: Queryable, user: { email: string; name: string | null; passwordHash: string }): Promise<User> {
  const { rows } = await db.query<User>(`INSERT INTO users (email, name, password_hash) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`, [
    user.email,
    user.name,
    user.passwordHash,
  ]);
  return rows[0]!;
}

export async function findUserByEmail(db: Queryable, email: string): Promise<UserWithPassword | undefined> {
  const { rows } = await db.query<UserWithPassword>(`SELECT ${COLUMNS}, password_hash FROM users WHERE lower(email) = lower($1)`, [email]);
  return rows[0];
}

/** All users, or the members of one organization (with their role there). */
export async function listUsers(db: Queryable, organizationId?: string): Promise<(User & { role?: Role })[]> {
  if (!organizationId) {
    const { rows } = await db.query<User>(`SELECT ${COLUMNS} FROM users ORDER BY created_at, id`);
    return rows;
  }
  const { rows } = await db.query<User & { role: Role }>(
    `SELECT u.id, u.email, u.name, u.active, u.created_at, m.role
       FROM users u JOIN memberships m ON m.user_id = u.id
      WHERE m.organization_id = $1 ORDER BY u.created_at, u.id`,
    [organizationId],
  );
  return rows;
}

export async function setUserActiveByEmail(db: Queryable, email: string, active: boolean): Promise<User | undefined> {
  const { rows } = await db.query<User>(`UPDATE users SET active = $2 WHERE lower(email) = lower($1) RETURNING ${COLUMNS}`, [
    email,
    active,
  ]);
  return rows[0];
}

export async function insertMembership(db: Queryable, organizationId: string, userId: string, role: Role): Promise<void> {
  await db.query(
    `INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, $3)
     ON CONFLICT (organization_id, user_id) DO UPDATE SET role = EXCLUDED.role`,
    [organizationId, userId, role],
  );
}

/** The active organizations a user may act in, oldest membership first. */
export async function listActiveMemberships(db: Queryable, userId: string): Promise<OrganizationMembership[]> {
  const { rows } = await db.query<OrganizationMembership>(
    `SELECT o.id, o.name, m.role
       FROM memberships m JOIN organizations o ON o.id = m.organization_id
      WHERE m.user_id = $1 AND o.active
      ORDER BY m.created_at, o.id`,
    [userId],
  );
  return rows;
}
