// Retention's deletes (retention.ts): old attempts, and deliveries that
// finished long ago, a batch at a time so no delete holds locks for long.
import { namedStatement, valuesOf } from '../../db/named-statement.ts';
import type { Queryable } from '../../db/pool.ts';

/** Attempts made before @cutoff, @batch at most. */
export const DELETE_ATTEMPTS_BEFORE = namedStatement(
  'switchboard_delete_attempts_before',
  { cutoff: 'timestamptz', batch: 'int' },
  `DELETE FROM webhook_attempts
    WHERE id IN (SELECT id FROM webhook_attempts WHERE attempted_at < @cutoff::timestamptz LIMIT @batch::int)`,
);

/** Finished deliveries (succeeded or failed) untouched since @cutoff, @batch at most. */
export const DELETE_FINISHED_DELIVERIES_BEFORE = namedStatement(
  'switchboard_delete_finished_deliveries_before',
  { cutoff: 'timestamptz', batch: 'int' },
  `DELETE FROM webhook_deliveries
    WHERE id IN (SELECT id FROM webhook_deliveries WHERE finished_at < @cutoff::timestamptz AND status <> 'pending' LIMIT @batch::int)`,
);

export async function deleteAttemptsBefore(db: Queryable, cutoff: Date, batch = 5000): Promise<number> {
  const { rowCount } = await db.query(DELETE_ATTEMPTS_BEFORE.text, valuesOf(DELETE_ATTEMPTS_BEFORE, { cutoff, batch }));
  return rowCount ?? 0;
}

export async function deleteFinishedDeliveriesBefore(db: Queryable, cutoff: Date, batch = 5000): Promise<number> {
  const { rowCount } = await db.query(
    DELETE_FINISHED_DELIVERIES_BEFORE.text,
    valuesOf(DELETE_FINISHED_DELIVERIES_BEFORE, { cutoff, batch }),
  );
  return rowCount ?? 0;
}
