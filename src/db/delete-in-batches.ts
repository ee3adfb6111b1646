// Housekeeping deletes old rows a batch a statement, so that no one statement
// holds many rows' locks or a long transaction, and repeats until a batch
// comes back short.

/** Rows one statement of housekeeping deletes at most. */
export const DELETE_BATCH = 5000;

/** Runs `deleteBatch(limit)` until it deletes fewer than `limit` rows; returns how many it deleted in all. */
export async function deleteInBatches(deleteBatch: (limit: number) => Promise<number>, limit = DELETE_BATCH): Promise<number> {
  let total = 0;
  let removed: number;
  do {
    removed = await deleteBatch(limit);
    total += removed;
  } while (removed === limit);
  return total;
}
