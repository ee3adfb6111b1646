// The SET list of a partial update: a field left out of the patch (undefined)
// keeps its column, null clears it. Column names come from the caller's fixed
// list of updatable columns, never from the request, so only values are parameters.

/**
 * `column = $n` for each of `columns` present in the patch, numbered from $2
 * ($1 is the row's id), with their values in that order; undefined when the
 * patch sets nothing.
 */
export function patchAssignments<F>(
  columns: readonly (keyof F & string)[],
  patch: Partial<F>,
): { assignments: string; values: unknown[] } | undefined {
  const present = columns.filter((column) => patch[column] !== undefined);
  if (present.length === 0) return undefined;
  return {
    assignments: present.map((column, index) => `${column} = $${index + 2}`).join(', '),
    values: present.map((column) => patch[column]),
  };
}
