import { listOrganizations, insertOrganization, setOrganizationActive } from '../../orgs/organizations.queries.js';
import { output, requirePositional, requireString, requireUuid, UsageError, withDatabase } from '../context.js';
export async function orgCreate(ctx) {
    const name = requireString(ctx, 'name').trim();
    if (name.length < 1 || name.length > 200)
        throw new UsageError('--name must be 1 to 200 characters');
    const org = await withDatabase(ctx.config, (pool) => insertOrganization(pool, name));
    output(ctx, { id: org.id, name: org.name }, `created organization ${org.id} (${org.name})`);
}
export async function orgList(ctx) {
    const organizations = await withDatabase(ctx.config, (pool) => listOrganizations(pool));
    output(ctx, { organizations }, organizations.map((o) => `${o.id}  ${o.active ? 'active  ' : 'inactive'}  ${o.name}`).join('\n') || '(no organizations)');
}
export async function orgDeactivate(ctx) {
    const id = requireUuid('ORG_ID', requirePositional(ctx, 0, 'ORG_ID'));
    const org = await withDatabase(ctx.config, (pool) => setOrganizationActive(pool, id, false));
    if (!org)
        throw new UsageError(`organization ${id} does not exist`);
    output(ctx, { id: org.id, active: false }, `deactivated organization ${org.id}`);
}
//# sourceMappingURL=orgs.js.map