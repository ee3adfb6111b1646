// Access and refresh tokens, stored as SHA-256 hashes. System queries (owner role).
import type { Queryable } from '../db/pool.ts';
import type { UserInOrganization } from '../organizations/users.queries.ts';

export async function insertAccessToken(
  db: Queryable,
  token: { tokenHash: Buffer; grantId: string; scopes: string[]; expiresAt: Date },
): Promise<void> {
  await db.query('INSERT INTO oauth_access_tokens (token_hash, grant_id, scopes, expires_at) VALUES ($1, $2, $3, $4)', [
    token.tokenHash,
    token.grantId,
    token.scopes,
    token.expiresAt,
  ]);
}

/**
 * A refresh token expires REFRESH_TOKEN_TTL after it is issued (sliding with
 * every rotation), and never later than REFRESH_TOKEN_MAX_LIFETIME after its
 * grant was approved (`maxLifetimeSeconds`; absent: no cap).
 */
export async function insertRefreshToken(
  db: Queryable,
  token: { tokenHash: Buffer; grantId: string; scopes: string[]; expiresAt: Date; maxLifetimeSeconds?: number },
): Promise<{ id: string; expires_at: Date }> {
  const { rows } = await db.query<{ id: string; expires_at: Date }>(
    `INSERT INTO oauth_refresh_tokens (token_hash, grant_id, scopes, expires_at)
     SELECT $1, $2, $3, CASE WHEN $5::int IS NULL THEN $4 ELSE least($4, g.created_at + make_interval(secs => $5::int)) END
       FROM oauth_grants g WHERE g.id = $2
     RETURNING id, expires_at`,
    [token.tokenHash, token.grantId, token.scopes, token.expiresAt, token.maxLifetimeSeconds ?? null],
  );
  if (!rows[0]) throw new Error(`grant ${token.grantId} does not exist`);
  return rows[0];
}

/** What a valid access token stands for: the one row behind every bearer request. */
export interface ActiveAccessToken extends UserInOrganization {
  grant_id: string;
  scopes: string[];
  expires_at: Date;
  client_id: string;
  /** Null for a public client's token: it is bound to /mcp (public-clients/audience.ts isMcpToken). */
  client_secret_hash: Buffer | null;
}

/**
 * The hot path of the platform guard and of /oauth/userinfo: one query on the
 * unique token_hash index, joined to primary keys only (app_active_access_token,
 * inlined into the plan). It answers only for a token that is
 * unexpired and unrevoked, whose grant is unrevoked, whose user, organization
 * and membership are active. With the process caches (src/cache) a hit skips
 * it; the *_cache_* triggers' notifications evict hits.
 */
export async function findActiveAccessToken(db: Queryable, tokenHash: Buffer): Promise<ActiveAccessToken | undefined> {
  const { rows } = await db.query<ActiveAccessToken>({
    name: 'oauth_find_active_access_token',
    text: 'SELECT * FROM app_active_access_token($1)',
    values: [tokenHash],
  });
  return rows[0];
}

export interface RefreshTokenRecord {
  id: string;
  grant_id: string;
  client_id: string;
  scopes: string[];
  expired: boolean;
  revoked: boolean;
  /** Seconds since this token was rotated; null while it is the current one. */
  rotated_seconds_ago: number | null;
  /** The grant stands (oauth_grant_status.live). */
  live: boolean;
  /** Revoked: why it does not, when it does not (else its user, organization or membership is inactive). */
  grant_revoked: boolean;
  /** Seconds since the user approved the grant (REFRESH_TOKEN_MAX_LIFETIME counts from then). */
  grant_age_seconds: number;
}

/** The refresh token with its grant, locked so concurrent refreshes of one token serialise. */
export async function lockRefreshToken(db: Queryable, tokenHash: Buffer): Promise<RefreshTokenRecord | undefined> {
  const { rows } = await db.query<RefreshTokenRecord>(
    `SELECT r.id, r.grant_id, s.client_id, r.scopes,
            r.expires_at <= now() AS expired, r.revoked_at IS NOT NULL AS revoked,
            extract(epoch FROM now() - r.rotated_at)::float8 AS rotated_seconds_ago,
            s.live, s.grant_revoked, extract(epoch FROM now() - g.created_at)::float8 AS grant_age_seconds
       FROM oauth_refresh_tokens r
       JOIN oauth_grant_status s ON s.grant_id = r.grant_id
       JOIN oauth_grants g ON g.id = r.grant_id
      WHERE r.token_hash = $1
        FOR UPDATE OF r`,
    [tokenHash],
  );
  return rows[0];
}

/**
 * Rotation in one statement (app_refresh_exchange): the
 * presented token is rotated only if every rule of REFRESH_TOKEN_CHECKS holds
 * for it; then its successor (with the caller's id) and the access token are
 * inserted. Returns the access token's scopes, or undefined when nothing
 * happened (a rule does not hold: the named checks must decide).
 */
export interface RefreshExchange {
  tokenHash: Buffer;
  clientId: string;
  /** The scope the request names (parsed, as sent), and the access token's (normalised); undefined: the token's own. */
  requestedScopes: string[] | undefined;
  accessScopes: string[] | undefined;
  accessHash: Buffer;
  accessTtlSeconds: number;
  successorId: string;
  refreshHash: Buffer;
  refreshTtlSeconds: number;
  maxLifetimeSeconds: number | undefined;
  sealedSuccessor: Buffer;
}

export async function exchangeRefreshToken(db: Queryable, input: RefreshExchange): Promise<string[] | undefined> {
  const { rows } = await db.query<{ scopes: string[] | null }>(
    'SELECT app_refresh_exchange($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) AS scopes',
    [
      input.tokenHash,
      input.clientId,
      input.requestedScopes ?? null,
      input.accessScopes ?? null,
      input.maxLifetimeSeconds ?? null,
      input.accessHash,
      input.accessTtlSeconds,
      input.successorId,
      input.refreshHash,
      input.refreshTtlSeconds,
      input.sealedSuccessor,
    ],
  );
  return rows[0]?.scopes ?? undefined;
}

/** Scopes as one space-separated text (a scope token has no space: scopes.ts parseScope), null for none. */
const spaced = (scopes: string[] | undefined) => (scopes === undefined ? null : scopes.join(' '));

/**
 * Several refreshes in one statement (app_refresh_exchange_batch):
 * app_refresh_exchange for each, tokens locked in hash order. Per
 * refresh (same order) the access token's scopes, or undefined when it was
 * declined (nothing of it written: the named checks must decide).
 */
export async function exchangeRefreshTokens(db: Queryable, inputs: RefreshExchange[]): Promise<(string[] | undefined)[]> {
  const { rows } = await db.query<{ element: number; access_scopes: string[] | null }>(
    'SELECT element, access_scopes FROM app_refresh_exchange_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)',
    [
      inputs.map((x) => x.tokenHash),
      inputs.map((x) => x.clientId),
      inputs.map((x) => spaced(x.requestedScopes)),
      inputs.map((x) => spaced(x.accessScopes)),
      inputs.map((x) => x.maxLifetimeSeconds ?? null),
      inputs.map((x) => x.accessHash),
      inputs.map((x) => x.accessTtlSeconds),
      inputs.map((x) => x.successorId),
      inputs.map((x) => x.refreshHash),
      inputs.map((x) => x.refreshTtlSeconds),
      inputs.map((x) => x.sealedSuccessor),
    ],
  );
  const scopes: (string[] | undefined)[] = inputs.map(() => undefined);
  for (const row of rows) scopes[row.element - 1] = row.access_scopes ?? undefined;
  return scopes;
}

export interface CurrentRefreshToken {
  id: string;
  expired: boolean;
  /** The current token, sealed on its predecessor's row (null once the predecessor's grace has passed and it was purged). */
  sealed: Buffer | null;
}

/**
 * The grant's one current refresh token (unrotated, unrevoked: a partial
 * unique index allows one per grant) with its plaintext as sealed on the row
 * it replaced. Undefined when the grant has no current token.
 */
export async function findCurrentRefreshToken(db: Queryable, grantId: string): Promise<CurrentRefreshToken | undefined> {
  const { rows } = await db.query<CurrentRefreshToken>(
    `SELECT c.id, c.expires_at <= now() AS expired, p.successor_ciphertext AS sealed
       FROM oauth_refresh_tokens c
       LEFT JOIN oauth_refresh_tokens p ON p.grant_id = c.grant_id AND p.successor_id = c.id
      WHERE c.grant_id = $1 AND c.rotated_at IS NULL AND c.revoked_at IS NULL`,
    [grantId],
  );
  return rows[0];
}

/** Housekeeping: a successor needs to stay recoverable only during its predecessor's grace period. */
export async function forgetSealedSuccessors(db: Queryable, graceSeconds: number): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE oauth_refresh_tokens SET successor_ciphertext = NULL
      WHERE successor_ciphertext IS NOT NULL AND rotated_at < now() - make_interval(secs => $1::int)`,
    [graceSeconds],
  );
  return rowCount ?? 0;
}

export interface TokenOwner {
  kind: 'access' | 'refresh';
  id: string;
  grant_id: string;
  client_id: string;
}

/** RFC 7009: find either kind of token by hash, to check its client before revoking. */
export async function findTokenOwner(db: Queryable, tokenHash: Buffer): Promise<TokenOwner[]> {
  const { rows } = await db.query<TokenOwner>(
    `SELECT 'access' AS kind, t.id, t.grant_id, c.client_id
       FROM oauth_access_tokens t JOIN oauth_grants g ON g.id = t.grant_id JOIN oauth_clients c ON c.id = g.client_id
      WHERE t.token_hash = $1
     UNION ALL
     SELECT 'refresh' AS kind, r.id, r.grant_id, c.client_id
       FROM oauth_refresh_tokens r JOIN oauth_grants g ON g.id = r.grant_id JOIN oauth_clients c ON c.id = g.client_id
      WHERE r.token_hash = $1`,
    [tokenHash],
  );
  return rows;
}

export async function revokeAccessToken(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE oauth_access_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1', [id]);
}

/** Housekeeping: rows that can no longer authenticate anything. */
export async function deleteExpiredAccessTokens(db: Queryable, olderThan: Date): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM oauth_access_tokens WHERE expires_at < $1', [olderThan]);
  return rowCount ?? 0;
}

export async function deleteExpiredRefreshTokens(db: Queryable, olderThan: Date): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM oauth_refresh_tokens WHERE expires_at < $1', [olderThan]);
  return rowCount ?? 0;
}
