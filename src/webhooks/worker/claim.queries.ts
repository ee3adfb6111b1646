// The delivery worker's claim (system queries, owner role, no RLS), in one
// round trip: lock a few subscriptions that have due work, lease their due
// deliveries, log lost attempts, and read when to look again.
//
// Why several statements: the per-subscription in-flight cap must hold across
// many workers. Taking each subscription's claim lock first (claim-lock.ts:
// an advisory lock that claimers skip each other on, and nothing else takes)
// serialises claims per subscription, and the leasing statement's snapshot,
// taken after the lock, sees every lease committed by the previous holder
// (READ COMMITTED takes a new snapshot per statement). The leasing
// statement locks each delivery before writing its lease (a row of
// webhook_delivery_leases), and PostgreSQL re-checks the
// lock's "still the row read, still pending and due" test on the newest row
// version, so a delivery finished or rescheduled meanwhile is never re-leased.
//
// The statements, each named, with named parameters and a typed row:
// claim_subscriptions (claim-subscriptions.queries.ts), claim_leases
// (claim-leases.queries.ts) and claim_next_due (claim-next-due.queries.ts);
// the tests they share are in claim-predicates.queries.ts.
//
// Why one message: the statements are prepared once per connection and go
// as EXECUTEs in one simple-protocol query (one round trip), in one
// transaction (locks held to its end, all or nothing). Each result is read by
// the name of the step that made it (claim-pipeline.ts). The locked
// subscription ids pass from the first statement to the second in a
// transaction-local setting. The only values written into the message are
// integers and ids this module checks, never text.
//
// Why the COMMIT is a second message (docs/decisions.md, "The claim's commit
// overlaps the first attempts"): the leases come back while the transaction
// is still open, so the worker can start sending at once instead of after the
// commit's disk flush; the COMMIT goes out in the same tick, after the
// statement that reads when to look again (not needed to start sending).
// Until it has succeeded the rows stay locked by this transaction (no other
// claimer can lease them), and no outcome may be recorded: `committed` says
// when the leases exist. If it fails they never did, and the deliveries stay pending.
//
// Why it reads indexes, not the backlog: every lookup is per subscription
// through webhook_deliveries_due_idx (subscription_id, next_attempt_at, partial
// on pending) with a LIMIT, and the in-flight count through the partial index
// on leased rows, so the cost follows the batch and the number of active
// subscriptions, not the number of deliveries stored or due (docs/performance.md).
//
// Live grant: a subscription is claimed only while
// the OAuth grant it was made under stands — not revoked, its user,
// organization and membership active (oauth_grant_status.live, the test the
// token check and the outbox read too). How that and the locks below keep a
// committed stop from being followed by an attempt: docs/delivery-engine.md,
// "Invariants" 3. The grant test here also covers a delivery
// enqueued by a call that completed while the revocation committed. Any
// rewrite of the claim must keep the live-grant test (liveGrants) in both the
// locking and the leasing statement.
import { type Arguments, executeText, inlined } from '../../db/named-statement.ts';
import type { Pool, PoolClient } from '../../db/pool.ts';
import { type LeasedDelivery, type CLAIM_LEASES_PARAMETERS, claimLeases } from './claim-leases.queries.ts';
import { CLAIM_NEXT_DUE, type NextDue } from './claim-next-due.queries.ts';
import { ensurePrepared, pipeline, type Result } from './claim-pipeline.ts';
import { type ClaimedSubscriptions, type CLAIM_SUBSCRIPTIONS_PARAMETERS, claimSubscriptions } from './claim-subscriptions.queries.ts';

export type { LeasedDelivery } from './claim-leases.queries.ts';

export interface Claim {
  claimed: LeasedDelivery[];
  /** Where the next claim's walk goes on (null: it reached the end; the next starts from the first). */
  cursor: string | null;
  /** Subscriptions with due work this claim did not lock (limits, or locked by another worker): hints for the next. */
  leftOver: string[];
  /**
   * Resolves once the claim's transaction has committed (the leases are
   * durable); rejects if it could not (they never existed). Attempts may be
   * sent before it settles; their outcomes are recorded only after it resolves.
   */
  committed: Promise<Committed>;
}

export interface Committed {
  /** The earliest attempt scheduled later, open circuit's wait to end or lease to run out, after this claim. */
  nextDueAt: Date | null;
}

/** The limits of one claim. */
export interface ClaimLimits {
  /** Deliveries to lease at most (the worker's free slots). */
  limit: number;
  /** Of those, deliveries to degraded endpoints at most (the free slots of the degraded share). */
  degradedLimit: number;
  /** Subscriptions locked by one claim, at most. */
  maxSubscriptions: number;
  /** The per-subscription cap on attempts in flight (endpoint-health.ts). */
  maxInFlight: number;
  leaseMs: number;
  /** An attempt in flight longer than this makes its endpoint degraded (endpoint-health.ts SLOW_ATTEMPT_MS). */
  slowMs: number;
}

/** Where a claim looks for subscriptions with due work. */
export interface ClaimCandidates {
  /** Subscriptions known to have due work (listed by a NOTIFY, left over by an earlier claim). */
  hints: readonly string[];
  /** The walk goes on after this subscription id (null: from the first). */
  cursor: string | null;
  /** Subscriptions with pending deliveries the walk visits, at most. */
  walk: number;
  /** Subscriptions with an attempt in flight in this worker for longer than SLOW_ATTEMPT_MS: degraded. */
  degraded: readonly string[];
}

function whole(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new TypeError(`claim: ${name} must be a whole number, got ${value}`);
  return value;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function uuid(value: string): string {
  if (!UUID.test(value)) throw new TypeError(`claim: not a subscription id: ${JSON.stringify(value)}`);
  return value;
}

/** The only text written into the claim: ids this module checks against the uuid pattern first. */
function uuidLiteral(value: string | null): string {
  return value === null ? 'NULL::uuid' : `'${uuid(value)}'::uuid`;
}

function uuidArrayLiteral(values: readonly string[]): string {
  return `'{${values.map(uuid).join(',')}}'::uuid[]`;
}

/** A claim's arguments as checked SQL literals, by parameter name; and its three statements for the cap. */
export function claimOf(input: ClaimLimits & ClaimCandidates) {
  const maxInFlight = whole('maxInFlight', input.maxInFlight);
  const leases: Arguments<typeof CLAIM_LEASES_PARAMETERS, string> = {
    limit: String(whole('limit', input.limit)),
    degradedLimit: String(whole('degradedLimit', input.degradedLimit)),
    leaseMs: String(whole('leaseMs', input.leaseMs)),
    slowMs: String(whole('slowMs', input.slowMs)),
    degraded: uuidArrayLiteral(input.degraded),
  };
  const subscriptions: Arguments<typeof CLAIM_SUBSCRIPTIONS_PARAMETERS, string> = {
    ...leases,
    maxSubscriptions: String(whole('maxSubscriptions', input.maxSubscriptions)),
    cursor: uuidLiteral(input.cursor),
    hints: uuidArrayLiteral(input.hints),
    walk: String(whole('walk', input.walk)),
  };
  return { statements: statementsFor(maxInFlight), args: { subscriptions, leases } };
}

/** The claim's statements for each per-subscription cap (it is written into their text), made once. */
const BY_CAP = new Map<number, ClaimStatements>();

interface ClaimStatements {
  subscriptions: ReturnType<typeof claimSubscriptions>;
  leases: ReturnType<typeof claimLeases>;
  nextDue: typeof CLAIM_NEXT_DUE;
}

function statementsFor(maxInFlight: number): ClaimStatements {
  let statements = BY_CAP.get(maxInFlight);
  if (!statements) {
    statements = { subscriptions: claimSubscriptions(maxInFlight), leases: claimLeases(maxInFlight), nextDue: CLAIM_NEXT_DUE };
    BY_CAP.set(maxInFlight, statements);
  }
  return statements;
}

/** The claim's three statements with the arguments written in, by name: for EXPLAIN (tests, benchmarks). */
export function claimStatements(input: ClaimLimits & ClaimCandidates): { subscriptions: string; leases: string; nextDue: string } {
  const { statements, args } = claimOf(input);
  return {
    subscriptions: inlined(statements.subscriptions, args.subscriptions),
    leases: inlined(statements.leases, args.leases),
    nextDue: inlined(statements.nextDue, {}),
  };
}

/**
 * The plan mode of the claim's statements, for its transaction only (SET
 * LOCAL). Planned once per connection: a custom plan per claim (PostgreSQL's
 * default for the first executions, and for good when the generic plan's
 * estimate looks worse) costs more than running the claim.
 */
export const CLAIM_PLAN_MODE = ['genericPlan', 'SET LOCAL plan_cache_mode = force_generic_plan'] as const;

/**
 * claim_subscriptions and claim_leases are planned with sequential and bitmap
 * scans priced out (set just before the first, back to the defaults just
 * after the second; claim_next_due needs neither). Each one plan is made at
 * the connection's first claim, often while the tables hold a few rows, and
 * then kept: with those scans allowed, the plans made for one-page tables
 * scanned the whole table twice per claim (to lock the picked rows, then to
 * update them) instead of reaching them by tuple id, and read every live lease
 * (claim-plan.test.ts, "the worker's claim, planned while the table held one
 * delivery").
 */
export const CLAIM_SCANS = [
  ['noSeqScan', 'SET LOCAL enable_seqscan = off'],
  ['noBitmapScan', 'SET LOCAL enable_bitmapscan = off'],
] as const;
const CLAIM_SCANS_RESET = [
  ['seqScanAgain', 'SET LOCAL enable_seqscan TO DEFAULT'],
  ['bitmapScanAgain', 'SET LOCAL enable_bitmapscan TO DEFAULT'],
] as const;

/** The steps of the claim's first message that lease (after BEGIN, when the claim runs its own transaction). */
function leaseSteps(statements: ClaimStatements, args: ReturnType<typeof claimOf>['args']) {
  return [
    CLAIM_PLAN_MODE,
    ...CLAIM_SCANS,
    ['subscriptions', executeText(statements.subscriptions, args.subscriptions)],
    ['leases', executeText(statements.leases, args.leases)],
    ...CLAIM_SCANS_RESET,
  ] as const;
}

type LeaseSteps = ReturnType<typeof leaseSteps>;
type NextDueStep = readonly ['nextDue', string];

/** The claim as read from its locking and leasing statements' results. */
function claimIn(results: Record<'subscriptions' | 'leases', Result<unknown>>): Omit<Claim, 'committed'> {
  const locked = results.subscriptions.rows[0] as ClaimedSubscriptions;
  return { claimed: results.leases.rows as LeasedDelivery[], cursor: locked.cursor, leftOver: locked.left_over };
}

function nextDueIn(result: Result<unknown>): Committed {
  return { nextDueAt: (result.rows[0] as NextDue | undefined)?.at ?? null };
}

export async function claimDue(
  db: Pool | PoolClient,
  input: ClaimLimits &
    ClaimCandidates & {
      /**
       * Each round trip fails after this long without an answer (its connection
       * is then dropped, so the transaction ends): a connection that died
       * silently must not hold the worker until TCP gives up. Unset: no deadline.
       */
      deadlineMs?: number;
    },
): Promise<Claim> {
  const { deadlineMs } = input;
  const { statements, args } = claimOf(input);
  const lease = leaseSteps(statements, args);
  const nextDue: NextDueStep = ['nextDue', executeText(statements.nextDue, {})];
  if (!('release' in db)) return claimInTransaction(db, statements, lease, nextDue, deadlineMs);
  // A client of the caller's (a test, the benchmark): one implicit transaction, or part of the caller's.
  await ensurePrepared(db, Object.values(statements), deadlineMs);
  const results = await pipeline(db, [...lease, nextDue], deadlineMs);
  return { ...claimIn(results), committed: Promise.resolve(nextDueIn(results.nextDue)) };
}

/**
 * The claim in a transaction of its own, on a connection of the pool's: the
 * leases in the first message, the next-due read and the COMMIT in a second
 * (`committed`), sent at once without waiting for the attempts.
 */
async function claimInTransaction(
  db: Pool,
  statements: ClaimStatements,
  lease: LeaseSteps,
  nextDue: NextDueStep,
  deadlineMs: number | undefined,
): Promise<Claim> {
  // With a deadline, the server ends the transaction too if the COMMIT never
  // comes (the route to it died silently after the leases were read): its
  // claim locks would otherwise stay held, and other workers skip
  // those subscriptions, until the server's own TCP keepalive (hours).
  const begin = [
    ['begin', 'BEGIN'],
    ...(deadlineMs
      ? ([['idleDeadline', `SET LOCAL idle_in_transaction_session_timeout = ${whole('deadlineMs', deadlineMs)}`]] as const)
      : []),
  ] as const;
  const client = await db.connect();
  let results: Awaited<ReturnType<typeof pipeline<LeaseSteps[number][0]>>>;
  try {
    await ensurePrepared(client, Object.values(statements), deadlineMs);
    results = await pipeline(client, [...begin, ...lease], deadlineMs);
  } catch (error) {
    // The transaction may be open and aborted, or the connection gone: not fit to reuse.
    client.release(error as Error);
    throw error;
  }
  const committed = pipeline(client, [nextDue, ['commit', 'COMMIT']], deadlineMs).then(
    (done) => {
      client.release();
      return nextDueIn(done.nextDue);
    },
    (error: Error) => {
      client.release(error);
      throw error;
    },
  );
  // Marked handled here; every holder of the claim awaits it and sees the rejection.
  committed.catch(() => {});
  return { ...claimIn(results), committed };
}
