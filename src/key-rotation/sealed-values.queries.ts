// Every value sealed under SECRET_KEY (src/crypto/secret-box.ts), by kind:
// where it is stored and what its associated data (the context) is. Read as
// the owner, across organizations. A replacement is a compare-and-set on the
// sealed bytes, so a value rewritten or cleared meanwhile (a new secret on
// re-subscribe, a successor forgotten after its grace) is never overwritten.
import type { Queryable } from '../db/pool.ts';

export type SealedKind = 'webhook_secrets' | 'refresh_token_successors';

/** The table, the sealed column and the column that is its context; constants, never input. */
const STORED: Record<SealedKind, { table: string; sealed: string; context: string }> = {
  // Context: the organization (src/webhooks/subscriptions.service.ts).
  webhook_secrets: { table: 'webhook_subscriptions', sealed: 'secret_ciphertext', context: 'organization_id' },
  // Context: the successor's row id (src/oauth/successor-seal.ts).
  refresh_token_successors: { table: 'oauth_refresh_tokens', sealed: 'successor_ciphertext', context: 'successor_id' },
};

export const SEALED_KINDS = Object.keys(STORED) as SealedKind[];

export interface SealedValue {
  id: string;
  context: string;
  sealed: Buffer;
}

/** Up to `limit` sealed values of `kind` with an id after `afterId` (null: from the first), in id order. */
export async function listSealedValues(db: Queryable, kind: SealedKind, afterId: string | null, limit: number): Promise<SealedValue[]> {
  const { table, sealed, context } = STORED[kind];
  const { rows } = await db.query<SealedValue>(
    `SELECT id::text, ${context}::text AS context, ${sealed} AS sealed FROM ${table}
      WHERE ${sealed} IS NOT NULL AND ($1::uuid IS NULL OR id > $1::uuid)
      ORDER BY id LIMIT $2`,
    [afterId, limit],
  );
  return rows;
}

/** The value as stored now; undefined once its row is gone or no longer holds one. */
export async function readSealedValue(db: Queryable, kind: SealedKind, id: string): Promise<SealedValue | undefined> {
  const { table, sealed, context } = STORED[kind];
  const { rows } = await db.query<SealedValue>(
    `SELECT id::text, ${context}::text AS context, ${sealed} AS sealed FROM ${table} WHERE id = $1 AND ${sealed} IS NOT NULL`,
    [id],
  );
  return rows[0];
}

/** Writes `replacement` only where the row still holds `expected`; false when it no longer does. */
export async function replaceSealedValue(
  db: Queryable,
  kind: SealedKind,
  id: string,
  expected: Buffer,
  replacement: Buffer,
): Promise<boolean> {
  const { table, sealed } = STORED[kind];
  const { rowCount } = await db.query(`UPDATE ${table} SET ${sealed} = $3 WHERE id = $1 AND ${sealed} = $2`, [id, expected, replacement]);
  return rowCount === 1;
}
