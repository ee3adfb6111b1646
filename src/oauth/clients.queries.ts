import type { Pool, PoolClient, Queryable } from '../db/pool.ts';
import { withTransaction } from '../db/transaction.ts';

/**
 * Who registered the client (docs/interface.md §10): an operator (`platform`,
 * with a secret), or the client itself, by a Client ID Metadata Document
 * (`metadata_document`) or RFC 7591 registration (`registered`); those two
 * are public clients, without a secret.
 */
export type ClientKind = 'platform' | 'metadata_document' | 'registered';

export interface OAuthClient {
  id: string;
  client_id: string;
  name: string;
  redirect_uris: string[];
  scopes: string[];
  created_at: Date;
  secret_rotated_at: Date | null;
  kind: ClientKind;
  /** A metadata document's row: when the document must be fetched again. */
  metadata_expires_at: Date | null;
}

export interface OAuthClientWithSecret extends OAuthClient {
  /** Null exactly for public clients (a CHECK in SQL). */
  secret_hash: Buffer | null;
}

const COLUMNS = 'id, client_id, name, redirect_uris, scopes, created_at, secret_rotated_at, kind, metadata_expires_at';

export async function insertClient(
  db: Queryable,
  client: { clientId: string; secretHash: Buffer; name: string; redirectUris: string[]; scopes: string[] },
): Promise<OAuthClient> {
  const { rows } = await db.query<OAuthClient>(
    `INSERT INTO oauth_clients (client_id, secret_hash, name, redirect_uris, scopes)
     VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
    [client.clientId, client.secretHash, client.name, client.redirectUris, client.scopes],
  );
  return rows[0]!;
}

/** A public client: RFC 7591 registration (no expiry) or a metadata document (cached until `metadataExpiresAt`). */
export async function upsertPublicClient(
  db: Queryable,
  client: {
    clientId: string;
    kind: 'metadata_document' | 'registered';
    name: string;
    redirectUris: string[];
    scopes: string[];
    metadataExpiresAt: Date | null;
  },
): Promise<OAuthClientWithSecret> {
  const { rows } = await db.query<OAuthClientWithSecret>(
    `INSERT INTO oauth_clients (client_id, kind, secret_hash, name, redirect_uris, scopes, metadata_expires_at)
     VALUES ($1, $2, NULL, $3, $4, $5, $6)
     ON CONFLICT (client_id) DO UPDATE
       SET name = EXCLUDED.name, redirect_uris = EXCLUDED.redirect_uris, metadata_expires_at = EXCLUDED.metadata_expires_at
       WHERE oauth_clients.kind = EXCLUDED.kind
     RETURNING ${COLUMNS}, secret_hash`,
    [client.clientId, client.kind, client.name, client.redirectUris, client.scopes, client.metadataExpiresAt],
  );
  if (!rows[0]) throw new Error(`client ${client.clientId} exists with another kind`);
  return rows[0];
}

/** Housekeeping: self-registered clients never used to sign in, `olderThan` (RFC 7591 registrations are free to make). */
export async function deleteUnusedRegistrations(db: Queryable, olderThan: Date): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM oauth_clients c WHERE c.kind = 'registered' AND c.created_at < $1
        AND NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = c.id)`,
    [olderThan],
  );
  return rowCount ?? 0;
}

export async function listClients(db: Queryable): Promise<OAuthClient[]> {
  const { rows } = await db.query<OAuthClient>(`SELECT ${COLUMNS} FROM oauth_clients WHERE kind = 'platform' ORDER BY created_at, id`);
  return rows;
}

export async function findClient(db: Queryable, clientId: string): Promise<OAuthClientWithSecret | undefined> {
  const { rows } = await db.query<OAuthClientWithSecret>(`SELECT ${COLUMNS}, secret_hash FROM oauth_clients WHERE client_id = $1`, [
    clientId,
  ]);
  return rows[0];
}

/** The rows deleteClient's cascade deletes, locked in this order, a statement each (each waits for the one before). */
const CASCADE_LOCKS = [
  `SELECT ac.code_hash FROM oauth_authorization_codes ac
     JOIN oauth_grants g ON g.id = ac.grant_id JOIN oauth_clients c ON c.id = g.client_id
    WHERE c.client_id = $1 ORDER BY ac.code_hash FOR UPDATE OF ac`,
  `SELECT r.id FROM oauth_refresh_tokens r
     JOIN oauth_grants g ON g.id = r.grant_id JOIN oauth_clients c ON c.id = g.client_id
    WHERE c.client_id = $1 ORDER BY r.token_hash FOR UPDATE OF r`,
  `SELECT g.id FROM oauth_grants g JOIN oauth_clients c ON c.id = g.client_id
    WHERE c.client_id = $1 ORDER BY g.id FOR UPDATE OF g`,
  'SELECT s.id FROM webhook_subscriptions s WHERE s.client_id = $1 ORDER BY s.id FOR UPDATE',
];

/**
 * Deletes the client; its grants (with their codes and tokens) and its
 * webhook subscriptions (with their deliveries and attempts) go by ON DELETE
 * CASCADE. First the client lock (the schema's `app_lock_client`), which
 * rotations hold shared: every later statement's snapshot then sees every
 * token they wrote. Then, one statement each, the rows the cascade will delete
 * are locked FOR UPDATE in the order every other writer takes them in
 * (docs/delivery-engine.md, "Locks"): the grants' authorization codes and
 * refresh tokens (a code exchange and a refresh lock the code or token, then
 * insert tokens whose foreign key locks the grant; refreshes of several tokens
 * lock them in hash order), then the grants in id order, then the
 * subscriptions in id order (a grant's revocation locks the grant, then its
 * subscriptions in id order; recording outcomes waits for subscriptions in id
 * order). Left to the cascade, they were deleted grants first and
 * subscriptions in scan order, which could deadlock with each of those.
 */
export function deleteClient(pool: Pool, clientId: string): Promise<boolean> {
  return withTransaction(pool, async (tx) => {
    await tx.query('SELECT app_lock_client($1)', [clientId]);
    for (const lock of CASCADE_LOCKS) await tx.query(lock, [clientId]);
    // Each subscription the cascade deletes has its subscription.deleted event (reason client_deleted).
    await tx.query(
      `SELECT app_audit_event(s.organization_id, 'subscription.deleted', 'system', NULL, 'command line', 'subscription', s.id::text,
                              'client_deleted', app_audit_subscription_details(s))
         FROM webhook_subscriptions s WHERE s.client_id = $1 ORDER BY s.id`,
      [clientId],
    );
    const { rowCount } = await tx.query('DELETE FROM oauth_clients WHERE client_id = $1', [clientId]);
    return (rowCount ?? 0) > 0;
  });
}

/** Takes the client lock shared (`app_lock_client_shared`) until the transaction ends: the client's deletion waits for it. */
export async function lockClientShared(tx: PoolClient, clientId: string): Promise<void> {
  await tx.query('SELECT app_lock_client_shared($1)', [clientId]);
}

export async function updateClientSecret(db: Queryable, clientId: string, secretHash: Buffer): Promise<OAuthClient | undefined> {
  const { rows } = await db.query<OAuthClient>(
    `UPDATE oauth_clients SET secret_hash = $2, secret_rotated_at = now() WHERE client_id = $1 AND kind = 'platform' RETURNING ${COLUMNS}`,
    [clientId, secretHash],
  );
  return rows[0];
}
