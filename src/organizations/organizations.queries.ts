import type { Queryable } from '../db/pool.ts';

export interface Organization {
  id: string;
  name: string;
  active: boolean;
  created_at: Date;
}

const COLUMNS = 'id, name, active, created_at';

export async function insertOrganization(db: Queryable, name: string): Promise<Organization> {
  const { rows } = await db.query<Organization>(`INSERT INTO organizations (name) VALUES ($1) RETURNING ${COLUMNS}`, [name]);
  return rows[0]!;
}

export async function listOrganizations(db: Queryable): Promise<Organization[]> {
  const { rows } = await db.query<Organization>(`SELECT ${COLUMNS} FROM organizations ORDER BY created_at, id`);
  return rows;
}

export async function findOrganization(db: Queryable, id: string): Promise<Organization | undefined> {
  const { rows } = await db.query<Organization>(`SELECT ${COLUMNS} FROM organizations WHERE id = $1`, [id]);
  return rows[0];
}

export async function setOrganizationActive(db: Queryable, id: string, active: boolean): Promise<Organization | undefined> {
  const { rows } = await db.query<Organization>(`UPDATE organizations SET active = $2 WHERE id = $1 RETURNING ${COLUMNS}`, [id, active]);
  return rows[0];
}
