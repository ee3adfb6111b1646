import { NAME_MAX_LENGTH } from '../../http/schemas.ts';
import { listOrganizations, insertOrganization, setOrganizationActive } from '../../organizations/organizations.queries.ts';
import { output, requirePositional, requireString, requireUuid, UsageError, withDatabase, type CommandContext } from '../context.ts';

export async function orgCreate(ctx: CommandContext) {
  const name = requireString(ctx, 'name').trim();
  if (name.length < 1 || name.length > NAME_MAX_LENGTH) throw new UsageError(`--name must be 1 to ${NAME_MAX_LENGTH} characters`);
  const org = await withDatabase(ctx.config, (pool) => insertOrganization(pool, name));
  output(ctx, { id: org.id, name: org.name }, `created organization ${org.id} (${org.name})`);
}

export async function orgList(ctx: CommandContext) {
  const organizations = await withDatabase(ctx.config, (pool) => listOrganizations(pool));
  output(
    ctx,
    { organizations },
    organizations.map((o) => `${o.id}  ${o.active ? 'active  ' : 'inactive'}  ${o.name}`).join('\n') || '(no organizations)',
  );
}

export async function orgDeactivate(ctx: CommandContext) {
  const id = requireUuid('ORG_ID', requirePositional(ctx, 0, 'ORG_ID'));
  const org = await withDatabase(ctx.config, (pool) => setOrganizationActive(pool, id, false));
  if (!org) throw new UsageError(`organization ${id} does not exist`);
  output(ctx, { id: org.id, active: false }, `deactivated organization ${org.id}`);
}
