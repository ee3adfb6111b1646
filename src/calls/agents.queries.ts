import type { Queryable } from '../db/pool.ts';

export interface Agent {
  id: string;
  organization_id: string;
  name: string;
  created_at: Date;
}

/** Runs inside withOrg: the row-level policy supplies and checks the organization. */
export async function insertAgent(db: Queryable, name: string): Promise<Agent> {
  const { rows } = await db.query<Agent>(
    `INSERT INTO agents (organization_id, name) VALUES (app_current_org(), $1)
     RETURNING id, organization_id, name, created_at`,
    [name],
  );
  return rows[0]!;
}

/** The organization's agents by name (inside withOrg). */
export async function listAgents(db: Queryable): Promise<Agent[]> {
  const { rows } = await db.query<Agent>('SELECT id, organization_id, name, created_at FROM agents ORDER BY name, id');
  return rows;
}

/** Renames an agent of the current organization (inside withOrg); undefined when there is none of that id. */
export async function renameAgent(db: Queryable, id: string, name: string): Promise<Agent | undefined> {
  const { rows } = await db.query<Agent>('UPDATE agents SET name = $2 WHERE id = $1 RETURNING id, organization_id, name, created_at', [
    id,
    name,
  ]);
  return rows[0];
}
