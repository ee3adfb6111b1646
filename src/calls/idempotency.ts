// Idempotency-Key on calls ingest (POST /calls, POST /calls/{id}/complete),
// after the IETF httpapi draft "The Idempotency-Key HTTP Header Field" and
// Stripe's behaviour. A key belongs to its caller for 24 hours (keyCaller):
// two callers of one organization with the same key make two calls, and
// neither learns of the other's (the draft's security considerations).
// - the first request with it is carried out, and its key, its request's
//   fingerprint and its call are stored by the statement that writes the call
//   (calls.queries.ts, completed-calls.queries.ts), so they commit together or not at all;
// - a later request with the key and the same request gets the first answer
//   again (same status, same body: rebuilt from the call, whose answered
//   fields do not change) and changes nothing; with another request it gets
//   422 IDEMPOTENCY_KEY_REUSED;
// - while the first is still being processed in this process, a duplicate
//   gets 409 IDEMPOTENCY_KEY_IN_PROGRESS with Retry-After. In another process
//   the database decides: the duplicate's insert waits on the first's
//   uncommitted key row and, once that commits, fails on the primary key, and
//   the duplicate answers from the row;
// - a request that fails (4xx, 5xx) stores nothing, so the key stays free for
//   a retry (docs/decisions.md, "Idempotency keys").
import { createHash } from 'node:crypto';
import * as errors from '../errors.ts';
import { deleteInBatches } from '../db/delete-in-batches.ts';
import type { Pool } from '../db/pool.ts';
import { onePerPool } from '../db/per-pool.ts';
import { withOrg } from '../db/with-org.ts';
import type { Principal } from '../auth/principal.ts';
import { ValidationProblem } from '../http/problem-details.plugin.ts';
import type { Call } from './call.ts';
import { deleteExpiredKey, deleteExpiredKeys, findStoredRequest, KeyHeld, keyTaken, type KeyReservation } from './idempotency.queries.ts';

export const KEY_HEADER = 'idempotency-key';
export const KEY_MAX_LENGTH = 255;
const RETRY_AFTER_SECONDS = 1;

// A key: 1–255 printable ASCII characters, not starting or ending with a space
// (HTTP trims the ends of a header value, so they could not survive the trip).
const KEY_CHARACTER = '[!-~]';
const KEY = new RegExp(`^${KEY_CHARACTER}(?:[ -~]{0,${KEY_MAX_LENGTH - 2}}${KEY_CHARACTER})?$`);

// The header carries the key bare (as Stripe's clients send it) or as the
// draft's Structured Field string: in double quotes, with \" and \\ escaped.
// A bare key cannot start with a quote (send such a key quoted).
const QUOTED_CHARACTER = String.raw`(?:[!#-\[\]-~]|\\[\\"])`;
const QUOTED_OR_SPACE = String.raw`(?:[ !#-\[\]-~]|\\[\\"])`;
const BARE = `[!#-~](?:[ -~]{0,${KEY_MAX_LENGTH - 2}}[!-~])?`;
const QUOTED = `"${QUOTED_CHARACTER}(?:${QUOTED_OR_SPACE}{0,${KEY_MAX_LENGTH - 2}}${QUOTED_CHARACTER})?"`;
/** The header's value as the route schema checks it (Ajv compiles it with the u flag; so does this module). */
export const KEY_HEADER_PATTERN = `^(?:${BARE}|${QUOTED})$`;
export const KEY_RULE = `must be 1 to ${KEY_MAX_LENGTH} printable ASCII characters with no space at either end, as they are or as a quoted string`;
const HEADER = new RegExp(KEY_HEADER_PATTERN, 'u');

/** The key an Idempotency-Key header value (already checked against KEY_HEADER_PATTERN) carries; undefined for none. */
export function keyFromHeader(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!HEADER.test(value)) throw new ValidationProblem([{ field: KEY_HEADER, message: KEY_RULE }]);
  return value.startsWith('"') ? value.slice(1, -1).replace(/\\(["\\])/g, '$1') : value;
}

/** A key and whose it is: the key alone means nothing across callers. */
export interface CallerKey {
  /** keyCaller's answer, or CLI_CALLER. */
  caller: string;
  key: string;
}

/**
 * Whose keys a request uses: a platform request's OAuth grant (one client
 * acting for one user; reconnecting the app makes a new grant, and keys last
 * only a day), or the user of an x-user-token. Stored with the key
 * (idempotency_keys.caller).
 */
export function keyCaller(principal: Principal): string {
  if (principal.kind === 'user') return `user:${principal.userId}`;
  if (!principal.grantId) throw new Error('a platform principal without its grant');
  return `grant:${principal.grantId}`;
}

/** The command line's --idempotency-key: one caller per organization, whoever runs it. */
export const CLI_CALLER = 'cli';

/** The same rule for callers that do not come through HTTP (the CLI's --idempotency-key). */
export function checkKey(key: string): string {
  if (!KEY.test(key)) throw new ValidationProblem([{ field: KEY_HEADER, message: KEY_RULE }]);
  return key;
}

/**
 * What "the same request" means: the endpoint (with the call id of its path)
 * and the request's fields after parsing, in a fixed order, so key order,
 * whitespace and an explicit null for an omitted field do not matter.
 */
export function fingerprint(endpoint: string, fields: unknown[]): Buffer {
  return createHash('sha256')
    .update(`${endpoint}\n${JSON.stringify(fields)}`)
    .digest();
}

/** A 409 that carries its Retry-After (the problem handler sends the header). */
export class KeyInProgress extends errors.IDEMPOTENCY_KEY_IN_PROGRESS {
  readonly retryAfterSeconds = RETRY_AFTER_SECONDS;
  constructor() {
    super(RETRY_AFTER_SECONDS);
  }
}

/** An answer to give, and whether it is a stored one given again. */
export interface Answer<T> {
  status: number;
  body: T;
  replayed: boolean;
}

/** Keys of requests being processed through a pool (in practice: in this process), as "organization caller key". */
const keysInFlight = onePerPool(() => new Set<string>());

/** A request to carry out once per key. */
export interface KeyedRequest<T> {
  key: CallerKey | undefined;
  /** The method and path (with its ids) and the request's fields: see fingerprint(). */
  endpoint: string;
  fields: unknown[];
  /** The status of the answer when it succeeds (the one its key keeps). */
  status: number;
  /** The first answer's body, from the call the first request created or completed. */
  rebuild(call: Call): T;
}

/**
 * Runs `run` once per key: `run` gets the reservation to store with its write, null
 * without a key. When the write finds the key held (KeyHeld, or the primary
 * key of a row committed meanwhile), the stored answer is given again, or
 * 422 for another request with the same key.
 */
export async function idempotently<T>(
  pool: Pool,
  organizationId: string,
  request: KeyedRequest<T>,
  run: (reservation: KeyReservation | null) => Promise<T>,
): Promise<Answer<T>> {
  if (request.key === undefined) return { status: request.status, body: await run(null), replayed: false };
  const reservation = {
    caller: request.key.caller,
    key: checkKey(request.key.key),
    fingerprint: fingerprint(request.endpoint, request.fields),
    status: request.status,
  };
  const inFlight = keysInFlight(pool);
  const id = `${organizationId} ${reservation.caller} ${reservation.key}`;
  if (inFlight.has(id)) throw new KeyInProgress();
  inFlight.add(id);
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        return { status: request.status, body: await run(reservation), replayed: false };
      } catch (error) {
        if (!(error instanceof KeyHeld) && !keyTaken(error)) throw error;
        const stored = await withOrg(pool, organizationId, (db) => findStoredRequest(db, reservation.caller, reservation.key));
        if (stored) {
          if (!stored.fingerprint.equals(reservation.fingerprint)) throw new errors.IDEMPOTENCY_KEY_REUSED();
          return { status: stored.response_status, body: request.rebuild(stored.call), replayed: true };
        }
        // Not held: an expired row housekeeping has not removed yet is removed, and the request carried out.
        if (attempt === 1 && (await withOrg(pool, organizationId, (db) => deleteExpiredKey(db, reservation.caller, reservation.key))))
          continue;
        // Otherwise the write's own refusal, or (a row that expired in between) a retry reserves the key afresh.
        throw (error instanceof KeyHeld && error.otherwise) || new KeyInProgress();
      }
    }
  } finally {
    inFlight.delete(id);
  }
}

/** Housekeeping (hourly, calls.tasks.ts): keys older than 24 hours. */
export function purgeExpiredIdempotencyKeys(pool: Pool): Promise<number> {
  return deleteInBatches((limit) => deleteExpiredKeys(pool, limit));
}
