// PostgreSQL errors are told apart by SQLSTATE and constraint name, never by
// message text, which changes with the server's version and language.
export const FOREIGN_KEY_VIOLATION = '23503';
export const UNIQUE_VIOLATION = '23505';
/** SQLSTATE class 23: integrity constraint violations of every kind. */
const INTEGRITY_VIOLATION_CLASS = '23';

/**
 * The constraint a statement violated: of the kind `sqlstate` names (such as
 * UNIQUE_VIOLATION), or of any kind when it is absent; undefined for any other error.
 */
export function violatedConstraint(error: unknown, sqlstate?: string): string | undefined {
  const pgError = error as { code?: unknown; constraint?: unknown };
  if (typeof pgError?.code !== 'string' || typeof pgError.constraint !== 'string') return undefined;
  const matches = sqlstate === undefined ? pgError.code.startsWith(INTEGRITY_VIOLATION_CLASS) : pgError.code === sqlstate;
  return matches ? pgError.constraint : undefined;
}
