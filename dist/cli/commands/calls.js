import { createAgent, createCall } from '../../calls/calls.service.js';
import { ValidationProblem } from '../../http/problem-details.plugin.js';
import { findOrganization } from '../../orgs/organizations.queries.js';
import { optionalString, output, requireString, requireUuid, UsageError, withDatabase } from '../context.js';
/** Field names of the service's validation problems, as the CLI spells them. */
const FLAGS = { name: '--name', summary: '--summary', duration_seconds: '--duration', agent_id: '--agent' };
function asUsageError(error) {
    if (error instanceof ValidationProblem) {
        const first = error.fieldErrors[0];
        throw new UsageError(`${FLAGS[first.field] ?? first.field} ${first.message}`);
    }
    throw error;
}
async function requireActiveOrganization(pool, id) {
    const organization = await findOrganization(pool, id);
    if (!organization)
        throw new UsageError(`--org: organization ${id} does not exist`);
    if (!organization.active)
        throw new UsageError(`--org: organization ${id} is deactivated`);
}
export async function agentCreate(ctx) {
    const organizationId = requireUuid('--org', requireString(ctx, 'org'));
    const name = requireString(ctx, 'name');
    const agent = await withDatabase(ctx.config, async (pool) => {
        await requireActiveOrganization(pool, organizationId);
        return createAgent(pool, organizationId, name).catch(asUsageError);
    });
    output(ctx, { id: agent.id, name: agent.name }, `created agent ${agent.id} (${agent.name})`);
}
function parseDuration(raw) {
    if (!/^\d+$/.test(raw.trim()))
        throw new UsageError(`--duration must be a whole number of seconds, got "${raw}"`);
    return Number(raw.trim());
}
/** Records a completed call, which fires call.completed to every active subscription of the organization. */
export async function callComplete(ctx) {
    const organizationId = requireUuid('--org', requireString(ctx, 'org'));
    const summary = requireString(ctx, 'summary');
    const durationSeconds = parseDuration(requireString(ctx, 'duration'));
    const agent = optionalString(ctx, 'agent');
    const agentId = agent === undefined ? null : requireUuid('--agent', agent);
    const call = await withDatabase(ctx.config, async (pool) => {
        await requireActiveOrganization(pool, organizationId);
        return createCall(pool, organizationId, { agent_id: agentId, summary, duration_seconds: durationSeconds }).catch(asUsageError);
    });
    output(ctx, call, `completed call ${call.id} (${call.duration_seconds}s)`);
}
//# sourceMappingURL=calls.js.map