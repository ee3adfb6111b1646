import { NAME_MAX_LENGTH } from '../../http/name-limit.ts';
import { handler, type Command } from '../command.ts';

export const orgCreateCommand: Command = {
  name: 'org create',
  summary: 'Create an organization',
  options: [{ name: 'name', value: 'N', required: true, description: `its name, 1 to ${NAME_MAX_LENGTH} characters` }],
  json: '{id, name}',
  run: handler(() => import('./orgs.handlers.ts'), 'orgCreate'),
};

export const orgListCommand: Command = {
  name: 'org list',
  summary: 'List every organization, active or not',
  json: '{organizations: [...]}',
  run: handler(() => import('./orgs.handlers.ts'), 'orgList'),
};

export const orgDeactivateCommand: Command = {
  name: 'org deactivate',
  summary: 'Deactivate an organization: its users and platform tokens stop working for it',
  arguments: [{ name: 'ORG_ID', description: "the organization's id" }],
  json: '{id, active: false}',
  run: handler(() => import('./orgs.handlers.ts'), 'orgDeactivate'),
};
