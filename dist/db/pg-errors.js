// PostgreSQL errors are told apart by SQLSTATE and constraint name, never by
// message text (STYLE rule 5).
export const FOREIGN_KEY_VIOLATION = '23503';
export const UNIQUE_VIOLATION = '23505';
/** The constraint a statement violated with `sqlstate`, or undefined for any other error. */
export function violatedConstraint(error, sqlstate) {
    const pgError = error;
    if (pgError?.code !== sqlstate || typeof pgError.constraint !== 'string')
        return undefined;
    return pgError.constraint;
}
//# sourceMappingURL=pg-errors.js.map