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

export { NAME_MAX_LENGTH } from './name-limit.ts';

/**
 * Ajv's `uuid` format also accepts a `urn:uuid:` prefix, which PostgreSQL's
 * uuid type refuses (a 500 instead of a 400); the pattern keeps to the plain form.
 */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
export const Uuid = Type.String({ format: 'uuid', pattern: UUID_PATTERN });
export const IdParams = Type.Object({ id: Uuid });

/** The `cursor` query parameter of a paged list: the last id of the previous page (src/http/pagination.ts). */
export const PageCursor = Type.String({
  format: 'uuid',
  pattern: UUID_PATTERN,
  description: 'next page: the value from the Link rel="next" header',
});
