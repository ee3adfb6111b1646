// Shapes shared by every route's OpenAPI description.
import { Type } from '@sinclair/typebox';

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
    request_id: Type.Optional(Type.String()),
    error: Type.Optional(Type.String({ description: 'RFC 6750 error code on bearer-token failures' })),
  },
  { description: 'RFC 9457 problem details' },
);

export const Uuid = Type.String({ format: 'uuid' });
export const IdParams = Type.Object({ id: Uuid });
