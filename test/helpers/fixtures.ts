// Organizations, users and tokens made through the same services the CLI uses.
import { randomBytes } from 'node:crypto';
import { issueSession } from '../../src/auth/sessions.service.ts';
import type { Pool } from '../../src/db/pool.ts';
import { insertOrganization, type Organization } from '../../src/organizations/organizations.queries.ts';
import { createUser } from '../../src/organizations/organizations.service.ts';
import type { Role, User } from '../../src/organizations/users.queries.ts';

export const PASSWORD = 'correct horse battery staple';

export function uniqueEmail(prefix = 'user'): string {
  return `${prefix}-${randomBytes(4).toString('hex')}@example.com`;
}

export async function createOrg(pool: Pool, name = `Org ${randomBytes(3).toString('hex')}`): Promise<Organization> {
  return insertOrganization(pool, name);
}

export interface Member {
  org: Organization;
  user: User;
  email: string;
  token: string;
}

/** An organization with one user and an x-user-token for it. */
export async function createMember(pool: Pool, options: { org?: Organization; role?: Role; email?: string } = {}): Promise<Member> {
  const org = options.org ?? (await createOrg(pool));
  const email = options.email ?? uniqueEmail();
  const user = await createUser(pool, { email, password: PASSWORD, organizationId: org.id, role: options.role ?? 'owner' });
  const session = await issueSession(pool, user, org.id);
  return { org, user, email, token: session.token };
}
