// What the `switchboard org` commands do, declared in orgs.ts and loaded only when
// one of them runs (command.ts, handler).
import { COMMAND_LINE } from '../../audit/audit-actor.ts';
import { actAs } from '../../audit/audit-events.queries.ts';
import { withTransaction } from '../../db/transaction.ts';
import { NAME_MAX_LENGTH } from '../../http/name-limit.ts';
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
  const org = await withDatabase(ctx.config, (pool) =>
    // The subscriptions the deactivation stops are disabled by the command line (audit log).
    withTransaction(pool, async (tx) => {
      await actAs(tx, COMMAND_LINE);
      return setOrganizationActive(tx, id, false);
    }),
  );
  if (!org) throw new UsageError(`organization ${id} does not exist`);
  output(ctx, { id: org.id, active: false }, `deactivated organization ${org.id}`);
}
