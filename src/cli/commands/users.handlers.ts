// What the `switchboard user and user-token` commands do, declared in users.ts and loaded only when
// one of them runs (command.ts, handler).
import { COMMAND_LINE } from '../../audit/audit-actor.ts';
import { actAs } from '../../audit/audit-events.queries.ts';
import { withTransaction } from '../../db/transaction.ts';
import { issueSession } from '../../auth/sessions.service.ts';
import { createUser, OrgsError } from '../../organizations/organizations.service.ts';
import { findUserByEmail, listUsers, setUserActiveByEmail, type Role } from '../../organizations/users.queries.ts';
import { optionalString, output, requireString, requireUuid, UsageError, withDatabase, type CommandContext } from '../context.ts';
import { ROLES } from '../../organizations/roles.ts';

export async function userCreate(ctx: CommandContext) {
  const email = requireString(ctx, 'email');
  const password = requireString(ctx, 'password');
  const organizationId = requireUuid('--org', requireString(ctx, 'org'));
  const name = optionalString(ctx, 'name');
  const role = (optionalString(ctx, 'role') ?? 'member') as Role;
  if (!ROLES.includes(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
  const user = await withDatabase(ctx.config, (pool) =>
    createUser(pool, { email, password, organizationId, role, ...(name ? { name } : {}) }).catch((error) => {
      throw error instanceof OrgsError ? new UsageError(error.message) : error;
    }),
  );
  const did = user.created ? 'created user' : 'added existing user';
  output(ctx, { id: user.id, email: user.email }, `${did} ${user.id} (${user.email}) to organization ${organizationId} as ${role}`);
}

export async function userList(ctx: CommandContext) {
  const org = optionalString(ctx, 'org');
  const organizationId = org ? requireUuid('--org', org) : undefined;
  const users = await withDatabase(ctx.config, (pool) => listUsers(pool, organizationId));
  output(
    ctx,
    { users },
    users.map((u) => `${u.id}  ${u.active ? 'active  ' : 'inactive'}  ${u.email}${u.role ? `  ${u.role}` : ''}`).join('\n') || '(no users)',
  );
}

export async function userDeactivate(ctx: CommandContext) {
  const email = requireString(ctx, 'email');
  const user = await withDatabase(ctx.config, (pool) =>
    // The subscriptions the deactivation stops are disabled by the command line (audit log).
    withTransaction(pool, async (tx) => {
      await actAs(tx, COMMAND_LINE);
      return setUserActiveByEmail(tx, email, false);
    }),
  );
  if (!user) throw new UsageError(`no user with email ${email}`);
  output(ctx, { id: user.id, active: false }, `deactivated user ${user.id} (${user.email})`);
}

export async function userTokenCreate(ctx: CommandContext) {
  const email = requireString(ctx, 'email');
  const org = optionalString(ctx, 'org');
  const organizationId = org ? requireUuid('--org', org) : undefined;
  const session = await withDatabase(ctx.config, async (pool) => {
    const user = await findUserByEmail(pool, email);
    if (!user?.active) throw new UsageError(`no active user with email ${email}`);
    return issueSession(pool, user, organizationId).catch((error: Error) => {
      throw new UsageError(error.message);
    });
  });
  output(ctx, { token: session.token, expires_at: session.expires_at.toISOString() }, session.token);
}
