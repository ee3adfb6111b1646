import { ROLES } from '../../organizations/roles.ts';
import { handler, type Command } from '../command.ts';

export const userCreateCommand: Command = {
  name: 'user create',
  summary: 'Create a user in an organization, or add an existing user (same email and password) to it',
  options: [
    { name: 'email', value: 'E', required: true, description: 'the sign-in email' },
    { name: 'password', value: 'P', required: true, description: 'the password, at least 8 characters; an existing user must give theirs' },
    { name: 'org', value: 'ORG_ID', required: true, description: 'the organization to join' },
    { name: 'name', value: 'N', description: 'the display name' },
    { name: 'role', value: 'ROLE', description: `${ROLES.join(', ')} (default member)` },
  ],
  json: '{id, email}',
  run: handler(() => import('./users.handlers.ts'), 'userCreate'),
};

export const userListCommand: Command = {
  name: 'user list',
  summary: 'List users, with their role in the organization given',
  options: [{ name: 'org', value: 'ORG_ID', description: "only this organization's members" }],
  json: '{users: [...]}',
  run: handler(() => import('./users.handlers.ts'), 'userList'),
};

export const userDeactivateCommand: Command = {
  name: 'user deactivate',
  summary: 'Deactivate a user: they can no longer sign in, and their sessions and tokens stop working',
  options: [{ name: 'email', value: 'E', required: true, description: "the user's email" }],
  json: '{id, active: false}',
  run: handler(() => import('./users.handlers.ts'), 'userDeactivate'),
};

export const userTokenCreateCommand: Command = {
  name: 'user-token create',
  summary: 'Issue an x-user-token for a user (a session, as signing in would)',
  options: [
    { name: 'email', value: 'E', required: true, description: "the user's email" },
    { name: 'org', value: 'ORG_ID', description: "the organization it acts in (default: the user's first)" },
  ],
  json: '{token, expires_at}',
  run: handler(() => import('./users.handlers.ts'), 'userTokenCreate'),
};
