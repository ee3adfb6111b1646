import { Type } from '@sinclair/typebox';
import { ProblemSchema } from '../http/schemas.ts';

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

export const LoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
    organization_id: Type.Optional(Type.String({ format: 'uuid' })),
  },
  { additionalProperties: false },
);

export const LoginResponse = Type.Composite([Type.Object({ token: Type.String() }), SessionView]);

export const SwitchOrganizationBody = Type.Object(
  { organization_id: Type.String({ format: 'uuid' }) },
  { additionalProperties: false },
);

export { ProblemSchema };
