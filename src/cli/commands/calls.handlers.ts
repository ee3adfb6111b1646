// What the `switchboard agent create and call complete` commands do, declared in calls.ts and loaded only when
// one of them runs (command.ts, handler).
import { NO_CACHES } from '../../cache/caches.ts';
import { recordCall } from '../../calls/calls.service.ts';
import { createAgent } from '../../calls/agents.service.ts';
import { CLI_CALLER } from '../../calls/idempotency.ts';
import * as errors from '../../errors.ts';
import type { Pool } from '../../db/pool.ts';
import { ValidationProblem } from '../../http/problem-details.plugin.ts';
import { findOrganization } from '../../organizations/organizations.queries.ts';
import { optionalString, output, requireString, requireUuid, UsageError, withDatabase, type CommandContext } from '../context.ts';
import { newTraceContext } from '../../tracing/trace-context.ts';

/** Field names of the service's validation problems, as the CLI spells them. */
const FLAGS: Record<string, string> = {
  name: '--name',
  summary: '--summary',
  duration_seconds: '--duration',
  agent_id: '--agent',
  'idempotency-key': '--idempotency-key',
};

function asUsageError(error: unknown): never {
  if (error instanceof ValidationProblem) {
    const first = error.fieldErrors[0]!;
    throw new UsageError(`${FLAGS[first.field] ?? first.field} ${first.message}`);
  }
  if (error instanceof errors.IDEMPOTENCY_KEY_REUSED) throw new UsageError(`--idempotency-key: ${error.message}`);
  throw error;
}

async function requireActiveOrganization(pool: Pool, id: string): Promise<void> {
  const organization = await findOrganization(pool, id);
  if (!organization) throw new UsageError(`--org: organization ${id} does not exist`);
  if (!organization.active) throw new UsageError(`--org: organization ${id} is deactivated`);
}

export async function agentCreate(ctx: CommandContext) {
  const organizationId = requireUuid('--org', requireString(ctx, 'org'));
  const name = requireString(ctx, 'name');
  const agent = await withDatabase(ctx.config, async (pool) => {
    await requireActiveOrganization(pool, organizationId);
    return createAgent(pool, organizationId, name).catch(asUsageError);
  });
  output(ctx, { id: agent.id, name: agent.name }, `created agent ${agent.id} (${agent.name})`);
}

function parseDuration(raw: string): number {
  if (!/^\d+$/.test(raw.trim())) throw new UsageError(`--duration must be a whole number of seconds, got "${raw}"`);
  return Number(raw.trim());
}

/**
 * Records a completed call, which fires call.completed to every active
 * subscription of the organization. With --idempotency-key, as POST /calls
 * with that Idempotency-Key: run again with the same key and flags, it prints
 * the call the first run recorded and records nothing. The command line is
 * one caller of the organization: its keys are not those of an API caller.
 */
export async function callComplete(ctx: CommandContext) {
  const organizationId = requireUuid('--org', requireString(ctx, 'org'));
  const summary = requireString(ctx, 'summary');
  const durationSeconds = parseDuration(requireString(ctx, 'duration'));
  const agent = optionalString(ctx, 'agent');
  const agentId = agent === undefined ? null : requireUuid('--agent', agent);
  const idempotencyKey = optionalString(ctx, 'idempotency-key');
  const answer = await withDatabase(ctx.config, async (pool) => {
    await requireActiveOrganization(pool, organizationId);
    return recordCall(
      pool,
      NO_CACHES,
      organizationId,
      { agent_id: agentId, summary, duration_seconds: durationSeconds },
      idempotencyKey === undefined ? undefined : { caller: CLI_CALLER, key: idempotencyKey },
      newTraceContext(),
    ).catch(asUsageError);
  });
  const call = answer.body;
  const replayed = answer.replayed ? ', recorded earlier with this idempotency key' : '';
  output(ctx, call, `completed call ${call.id} (${call.duration_seconds}s${replayed})`);
}
