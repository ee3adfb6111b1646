import { Type } from '@sinclair/typebox';
import { ProblemSchema } from '../http/schemas.ts';
import { EMAIL_MAX_LENGTH } from '../organizations/users.queries.ts';

const Organization = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  role: Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')]),
});

const User = Type.Object({
  id: Type.String({ format: 'uuid' }),
  email: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
});

export const SessionView = Type.Object({
  expires_at: Type.String({ format: 'date-time' }),
  user: User,
  organization: Organization,
  organizations: Type.Array(Organization),
});

/** The longest password a sign-in takes: enough for any passphrase, short of making hashing a burden. */
export const PASSWORD_MAX_LENGTH = 1024;

export const LoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: EMAIL_MAX_LENGTH }),
    password: Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH }),
    organization_id: Type.Optional(Type.String({ format: 'uuid' })),
  },
  { additionalProperties: false },
);

export const LoginResponse = Type.Composite([Type.Object({ token: Type.String() }), SessionView]);

export const SwitchOrganizationBody = Type.Object({ organization_id: Type.String({ format: 'uuid' }) }, { additionalProperties: false });

export { ProblemSchema };
