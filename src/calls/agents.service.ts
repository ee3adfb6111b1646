// Agents of one organization: made by the CLI and by owners and admins
// (POST /agents, PATCH /agents/{id}); every member reads them.
import { NAME_MAX_LENGTH } from '../http/schemas.ts';
import type { Pool } from '../db/pool.ts';
import { withOrg } from '../db/with-org.ts';
import { ValidationProblem } from '../http/problem-details.plugin.ts';
import { insertAgent, listAgents as listAgentRows, renameAgent, type Agent } from './agents.queries.ts';
import type { Principal } from '../auth/principal.ts';
import * as errors from '../errors.ts';

/** A name as given, trimmed; 1 to NAME_MAX_LENGTH characters, else a 400 naming `name`. */
export function agentName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length < 1 || trimmed.length > NAME_MAX_LENGTH) {
    throw new ValidationProblem([{ field: 'name', message: `must be 1 to ${NAME_MAX_LENGTH} characters` }]);
  }
  return trimmed;
}

export async function createAgent(pool: Pool, organizationId: string, name: string): Promise<Agent> {
  const trimmed = agentName(name);
  return withOrg(pool, organizationId, (db) => insertAgent(db, trimmed));
}

export function listAgents(pool: Pool, organizationId: string): Promise<Agent[]> {
  return withOrg(pool, organizationId, (db) => listAgentRows(db));
}

/** Owners and admins create and rename agents; a member (or anyone without a session) gets AGENTS_FORBIDDEN_ROLE. */
export function requireAgentWriter(principal: Principal): void {
  const role = principal.session?.role;
  if (role !== 'owner' && role !== 'admin') throw new errors.AGENTS_FORBIDDEN_ROLE(role ?? 'member');
}

/** A new name for an agent; calls keep the name they completed with. */
export async function updateAgent(pool: Pool, organizationId: string, id: string, name: string): Promise<Agent> {
  const trimmed = agentName(name);
  const agent = await withOrg(pool, organizationId, (db) => renameAgent(db, id, trimmed));
  if (!agent) throw new errors.AGENT_NOT_FOUND(id);
  return agent;
}
