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
// webhook_delivery_leases, migration 0033), and PostgreSQL re-checks the
// lock's "still the row read, still pending and due" test on the newest row
// version, so a delivery finished or rescheduled meanwhile is never re-leased.
//
// Why one query string: the statements go as one simple-protocol query, in
// one transaction (locks held to its end, all or nothing). The locked
// subscription ids pass from the first statement to the second in a
// transaction-local setting. The only values inlined are integers this module
// checks, never text.
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
// organization and membership active (the oauth_grant_status view, the same
// definition the token check uses). How that and the locks below keep a
// committed stop from being followed by an attempt: docs/delivery-engine.md,
// "Invariants" 3. The grant test here also covers a delivery
// enqueued by a call that completed while the revocation committed. Any
// rewrite of the claim must keep the live-grant test (liveGrants) in both the
// locking and the leasing statement.
import type { DeadlineQueryConfig, Pool, PoolClient } from '../../db/pool.ts';
import { tryClaimLock } from '../claim-lock.ts';

/**
 * The grants of the subscriptions in `rows` that stand for an active
 * principal: a subscription may be delivered to only while its grant is one.
 * Each grant is tested once per statement (an organization's subscriptions
 * often share one), by a probe (LIMIT 1): as EXISTS beside the
 * subscriptions, a plan made on a young table joined from the grants' side,
 * testing every subscription of every live grant on each claim.
 */
const liveGrants = (rows: string) => `SELECT named_grant.grant_id FROM (SELECT DISTINCT r.grant_id FROM ${rows} r) named_grant
   WHERE (SELECT true FROM oauth_grant_status g
           WHERE g.grant_id = named_grant.grant_id AND NOT g.grant_revoked AND g.principal_active LIMIT 1) IS NOT NULL`;

export interface ClaimedDelivery {
  id: string;
  organization_id: string;
  subscription_id: string;
  call_id: string;
  event: string;
  body: string;
  /** This attempt's number (X-Delivery-Attempt), counted over the delivery's life. */
  attempt: number;
  /** Attempts made before the current retry schedule began. */
  schedule_start: number;
  lease_token: string;
  callback_url: string;
  secret_ciphertext: Buffer | null;
  /** Set when the previous holder's lease ran out: that attempt's number and start. */
  lost_attempt: number | null;
  lost_attempt_at: Date | null;
  /** Its endpoint was degraded when claimed: the attempt holds one of the worker's slow slots. */
  degraded: boolean;
  /** Attempts of its subscription allowed in flight when claimed (across all workers). */
  cap: number;
  /** More of its subscription's deliveries were due than the claim took. */
  backlogged: boolean;
}

export interface Claim {
  claimed: ClaimedDelivery[];
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

function whole(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new TypeError(`claim: ${name} must be a whole number, got ${value}`);
  return value;
}

/**
 * Delivery `d` has no lease, or one that ran out: one probe of the leases'
 * primary key (migration 0033: a lease is a row of its own).
 */
const UNLEASED = `coalesce((SELECT l.expires_at <= now() FROM webhook_delivery_leases l WHERE l.delivery_id = d.id), true)`;

/** The earliest due delivery of subscription `s`: one probe of webhook_deliveries_due_idx. */
const FIRST_DUE = `
  SELECT d.next_attempt_at FROM webhook_deliveries d
   WHERE d.subscription_id = s.id AND d.status = 'pending' AND d.next_attempt_at <= now() AND ${UNLEASED}
   ORDER BY d.next_attempt_at LIMIT 1`;

/**
 * Live leases of subscription `s`, counted up to the cap (all a claim needs
 * to know), on webhook_delivery_leases_subscription_idx (subscription,
 * expiry). The expiry range leaves out leases that ran out, and the entries
 * that released leases leave behind until vacuum are visited only for the
 * last lease period, not since the last vacuum.
 */
const inFlight = (cap: number) => `
  SELECT count(*) FROM (SELECT FROM webhook_delivery_leases l
   WHERE l.subscription_id = s.id AND l.expires_at > now()
   ORDER BY l.expires_at DESC LIMIT ${cap}) live`;

/**
 * When to look again for work that is not due yet (work due now is found by
 * the candidates: the hints and the walk): the first retry, the first open
 * circuit's end of wait and the first lease to run out, one probe of an index
 * each (migrations 0022 and 0033), whatever the tables hold. Each is written
 * as the first row in the index's order (ORDER BY ... LIMIT 1), and the lease
 * source names its index's predicate (migration 0033): its plan is made once
 * per connection, often on a young table, and as min() over rows the planner
 * then guessed at one, each read every entry of its index, or sorted every
 * pending delivery (claim-plan.test.ts). Rows of subscriptions that
 * are not active are not left out (that would cost a probe per subscription):
 * an early look costs one claim.
 */
const NEXT_DUE = `SELECT least(
    (SELECT d.next_attempt_at FROM webhook_deliveries d
      WHERE d.status = 'pending' AND d.attempts > 0 AND d.next_attempt_at > now()
      ORDER BY d.next_attempt_at LIMIT 1),
    (SELECT s.circuit_retry_at FROM webhook_subscriptions s WHERE s.circuit_state = 'open' AND s.circuit_retry_at > now()
      ORDER BY s.circuit_retry_at LIMIT 1),
    (SELECT l.expires_at FROM webhook_delivery_leases l WHERE l.attempt > 0 ORDER BY l.expires_at LIMIT 1)) AS at`;

/** The limits of one claim. */
export interface ClaimLimits {
  /** Deliveries to lease at most (the worker's free slots). */
  limit: number;
  /** Of those, deliveries to degraded endpoints at most (the free slots of the slow share). */
  slowLimit: number;
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
  /** Subscriptions known to have due work (named by a NOTIFY, left over by an earlier claim). */
  hints: readonly string[];
  /** The walk goes on after this subscription id (null: from the first). */
  cursor: string | null;
  /** Subscriptions with pending deliveries the walk visits, at most. */
  walk: number;
  /** Subscriptions with an attempt in flight in this worker for longer than SLOW_ATTEMPT_MS: degraded. */
  slow: readonly string[];
}

export function claimStatements(input: ClaimLimits & ClaimCandidates): string {
  return statements(
    {
      limit: String(whole('limit', input.limit)),
      slowLimit: String(whole('slowLimit', input.slowLimit)),
      leaseMs: String(whole('leaseMs', input.leaseMs)),
      maxSubscriptions: String(whole('maxSubscriptions', input.maxSubscriptions)),
      slowMs: String(whole('slowMs', input.slowMs)),
      cursor: uuidLiteral(input.cursor),
      hints: uuidArrayLiteral(input.hints),
      walk: String(whole('walk', input.walk)),
      slow: uuidArrayLiteral(input.slow),
    },
    whole('maxInFlight', input.maxInFlight),
  );
}

type Arguments = Record<'limit' | 'slowLimit' | 'leaseMs' | 'maxSubscriptions' | 'slowMs' | 'cursor' | 'hints' | 'walk' | 'slow', string>;

/** The statements' arguments as parameter references, in this order (PREPARE). */
const PARAMETERS: Arguments = {
  limit: '$1',
  slowLimit: '$2',
  leaseMs: '$3',
  maxSubscriptions: '$4',
  slowMs: '$5',
  cursor: '$6',
  hints: '$7',
  walk: '$8',
  slow: '$9',
};
const PARAMETER_TYPES = '(int, int, int, int, int, uuid, uuid[], int, uuid[])';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function uuid(value: string): string {
  if (!UUID.test(value)) throw new TypeError(`claim: not a subscription id: ${JSON.stringify(value)}`);
  return value;
}

/** The only text inlined into the claim: ids this module checks against the uuid pattern first. */
function uuidLiteral(value: string | null): string {
  return value === null ? 'NULL::uuid' : `'${uuid(value)}'::uuid`;
}

function uuidArrayLiteral(values: readonly string[]): string {
  return `'{${values.map(uuid).join(',')}}'::uuid[]`;
}

/**
 * A subscription the claim may take deliveries of: active, and its circuit
 * closed or its wait over (then one probe at a time: capOf).
 */
const ELIGIBLE = `s.status = 'active' AND (s.circuit_state = 'closed' OR s.circuit_retry_at <= now())`;

/** Attempts of subscription `s` allowed in flight now: its adaptive limit, one while its circuit is open. */
const capOf = (maxInFlight: number) =>
  `(CASE WHEN s.circuit_state = 'open' THEN 1 ELSE least(coalesce(s.concurrency_limit, ${maxInFlight}), ${maxInFlight}) END)`;

/**
 * Degraded by its recorded health (never answered yet, circuit open, failing
 * or slow), or by the worker's own slow attempts (a test of its row and the
 * worker's list only: no index probe).
 */
const degradedKnown = (a: Arguments) =>
  `(NOT s.answered OR s.circuit_state = 'open' OR s.consecutive_failures > 0 OR s.slow OR s.id = ANY (${a.slow}))`;

/**
 * Degraded: known so, or another worker has had an attempt of it in flight
 * for longer than slowMs (its lease's age; one probe of the live-leases
 * index). Such endpoints share the worker's slow slots.
 */
const degraded = (a: Arguments) => `(${degradedKnown(a)} OR (
    SELECT true FROM webhook_delivery_leases l
     WHERE l.subscription_id = s.id AND l.expires_at > now()
       AND l.expires_at <= now() + (${a.leaseMs} - ${a.slowMs}) * interval '1 millisecond'
     -- A LIMIT keeps it one probe per subscription: as EXISTS it was planned as one scan of every live lease.
     LIMIT 1) IS NOT NULL)`;

/** The next subscription id after `after` that has a pending delivery: one probe of webhook_deliveries_due_idx. */
const nextWithPending = (after: string) => `SELECT d.subscription_id FROM webhook_deliveries d
   WHERE d.status = 'pending' AND d.subscription_id > ${after} ORDER BY d.subscription_id LIMIT 1`;

/**
 * The three statements. Fairness: subscriptions and deliveries are taken in
 * turns per organization (each organization's first, then each one's second,
 * ...), and within an organization in turns per subscription, so that one
 * organization's backlog or its many subscriptions never queue ahead of
 * another organization's fresh delivery. Endpoints in good health and
 * degraded ones are counted against separate limits (the worker's slots).
 */
function statements(a: Arguments, maxInFlight: number): string {
  const cap = capOf(maxInFlight);
  return `
WITH RECURSIVE walk (id, step) AS (
  SELECT (${nextWithPending(`coalesce(${a.cursor}, '00000000-0000-0000-0000-000000000000'::uuid)`)}), 1
  UNION ALL
  SELECT (${nextWithPending('walk.id')}), walk.step + 1 FROM walk WHERE walk.id IS NOT NULL AND walk.step < ${a.walk}
),
-- Each candidate's row by its id (LIMIT 1: never flattened into a join that
-- reads every subscription and tests each against the candidates).
named AS MATERIALIZED (
  SELECT s.* FROM (SELECT walk.id FROM walk WHERE walk.id IS NOT NULL UNION SELECT unnest(${a.hints})) named_id
   CROSS JOIN LATERAL (SELECT * FROM webhook_subscriptions s WHERE s.id = named_id.id LIMIT 1) s
   WHERE ${ELIGIBLE}
),
live_grant AS MATERIALIZED (${liveGrants('named')}),
candidate AS MATERIALIZED (
  SELECT c.id, c.next_attempt_at, row_number() OVER (PARTITION BY c.organization_id ORDER BY c.next_attempt_at) AS turn
    FROM (
      SELECT s.id, s.organization_id, due.next_attempt_at, ${degraded(a)} AS degraded
        FROM named s CROSS JOIN LATERAL (${FIRST_DUE}) due
       WHERE (${a.slowLimit} > 0 OR NOT ${degradedKnown(a)})
         AND s.grant_id IN (SELECT live_grant.grant_id FROM live_grant) AND (${inFlight(maxInFlight)}) < ${cap}
    ) c
   WHERE CASE WHEN c.degraded THEN ${a.slowLimit} > 0 ELSE ${a.limit} > 0 END
),
-- Taken in turn order, each only if no other claimer holds it (claim-lock.ts).
-- The lock is a volatile call in the WHERE of an ordered subquery: it is
-- not pushed below the sort, so the LIMIT stops taking locks once enough are held.
chosen AS MATERIALIZED (
  SELECT turns.id
    FROM (SELECT candidate.id FROM candidate ORDER BY candidate.turn, candidate.next_attempt_at) turns
   WHERE ${tryClaimLock('turns.id')}
   LIMIT ${a.maxSubscriptions}
),
-- FOR KEY SHARE, in id order as every other locker of several subscriptions:
-- a deletion or a grant's stop (FOR UPDATE) waits for this claim to end, or
-- holds the row and it is skipped here.
locked AS (
  SELECT s.id FROM webhook_subscriptions s
   WHERE s.id IN (SELECT chosen.id FROM chosen)
   ORDER BY s.id
     FOR KEY SHARE OF s SKIP LOCKED
)
SELECT set_config('switchboard.claim_subscriptions', coalesce((SELECT string_agg(locked.id::text, ',') FROM locked), ''), true),
       -- Where the next walk goes on (NULL: it reached the last subscription, the next starts again from the first).
       (SELECT walk.id FROM walk ORDER BY walk.step DESC LIMIT 1) AS cursor,
       -- Candidates with due work that this claim did not lock: the next claim's hints.
       ARRAY(SELECT candidate.id FROM candidate WHERE candidate.id NOT IN (SELECT locked.id FROM locked)
              ORDER BY candidate.turn, candidate.next_attempt_at LIMIT ${a.maxSubscriptions}) AS left_over;

WITH held AS MATERIALIZED (
  SELECT s.* FROM webhook_subscriptions s
   WHERE s.id = ANY (string_to_array(current_setting('switchboard.claim_subscriptions', true), ',')::uuid[])
     AND ${ELIGIBLE}
),
live_grant AS MATERIALIZED (${liveGrants('held')}),
-- MATERIALIZED: each subscription's free slots are counted once, not once per candidate row.
slots AS MATERIALIZED (
  SELECT s.id, s.organization_id, s.callback_url, s.secret_ciphertext, ${degraded(a)} AS degraded, ${cap} AS cap,
         ${cap} - (${inFlight(maxInFlight)})::int AS free
    FROM held s
   WHERE s.grant_id IN (SELECT live_grant.grant_id FROM live_grant)
),
-- The inner LIMIT is the constant cap, so the planner walks the index for a
-- few rows instead of sorting the subscription's whole backlog; the free
-- slots are counted off after. The claim lock keeps other claimers
-- away, and the lock below re-checks each row.
candidates AS MATERIALIZED (
  SELECT c.id, c.ctid, c.attempts, c.next_attempt_at, c.due, slots.callback_url, slots.secret_ciphertext, slots.degraded, slots.cap,
         row_number() OVER (PARTITION BY slots.organization_id ORDER BY c.n, c.next_attempt_at) AS turn
    FROM slots, LATERAL (
      SELECT first.*, row_number() OVER (ORDER BY first.next_attempt_at) AS n, count(*) OVER () AS due
        FROM (SELECT d.id, d.ctid, d.attempts, d.next_attempt_at
                FROM webhook_deliveries d
               WHERE d.subscription_id = slots.id AND d.status = 'pending' AND d.next_attempt_at <= now() AND ${UNLEASED}
               ORDER BY d.next_attempt_at
               -- One more than the cap: whether more is due than a claim may take.
               LIMIT ${maxInFlight + 1}) first
    ) c
   WHERE c.n <= slots.free
),
-- Turn by turn across organizations: degraded endpoints up to the slow
-- share's free slots, and all of them together up to the free slots.
picked AS MATERIALIZED (
  SELECT ranked.* FROM (
    SELECT allowed.*, row_number() OVER (ORDER BY allowed.turn, allowed.next_attempt_at) AS place
      FROM (SELECT candidates.*,
                   row_number() OVER (PARTITION BY candidates.degraded ORDER BY candidates.turn, candidates.next_attempt_at) AS pool_place
              FROM candidates) allowed
     WHERE NOT allowed.degraded OR allowed.pool_place <= ${a.slowLimit}) ranked
   WHERE ranked.place <= ${a.limit}
),
-- The picked deliveries are locked by their tuple ids (a TID scan: a join to
-- picked let a generic plan, made while the table was small, walk the due
-- index once per picked row), and read whole here, for the attempt. A row
-- updated since this statement's snapshot (its outcome recorded, handed
-- back, requeued) has moved: PostgreSQL re-checks the newest version, its
-- tuple id no longer matches, and it is left for the next claim. The state
-- test is written as a CASE so that no index matches it: written plainly, a
-- generic plan walked the whole due index and filtered on the tuple ids. A
-- row another transaction is writing (an outcome recorded as its lease runs
-- out) is left for the next claim, not waited for. Every writer of a lease
-- holds its delivery's row first (migration 0033).
claimable AS MATERIALIZED (
  SELECT d.ctid, d.id, d.organization_id, d.subscription_id, d.call_id, d.event, d.body, d.schedule_start
    FROM webhook_deliveries d
   WHERE d.ctid = ANY (ARRAY(SELECT picked.ctid FROM picked))
     AND CASE WHEN d.status = 'pending' AND d.next_attempt_at <= now() THEN true ELSE false END
     FOR NO KEY UPDATE OF d SKIP LOCKED
),
-- Leases that ran out on the locked deliveries: their attempts were lost,
-- and this claim takes them over.
old AS MATERIALIZED (
  SELECT l.delivery_id, l.attempt, l.started_at FROM webhook_delivery_leases l
   WHERE l.delivery_id = ANY (ARRAY(SELECT claimable.id FROM claimable))
),
-- The lost attempt is counted on its delivery, whose row so moves, and a
-- late record of that attempt finds it moved and is logged as superseded
-- (record.queries.ts).
counted AS (
  UPDATE webhook_deliveries d SET attempts = d.attempts + 1, updated_at = now()
   WHERE d.ctid = ANY (ARRAY(SELECT claimable.ctid FROM claimable WHERE claimable.id IN (SELECT old.delivery_id FROM old)))
),
-- The leases: a row each, its attempt the delivery's attempts + 1 (counting
-- a lost attempt). A lease still live is never replaced.
leased AS (
  INSERT INTO webhook_delivery_leases AS l (delivery_id, organization_id, subscription_id, token, attempt, started_at, expires_at)
  SELECT claimable.id, claimable.organization_id, claimable.subscription_id, gen_random_uuid(),
         coalesce(old.attempt, picked.attempts) + 1, now(), now() + ${a.leaseMs} * interval '1 millisecond'
    FROM claimable JOIN picked ON picked.ctid = claimable.ctid LEFT JOIN old ON old.delivery_id = claimable.id
  ON CONFLICT (delivery_id) DO UPDATE
     SET token = EXCLUDED.token, attempt = EXCLUDED.attempt, started_at = EXCLUDED.started_at, expires_at = EXCLUDED.expires_at
   WHERE l.expires_at <= now()
  RETURNING l.delivery_id, l.token, l.attempt
),
claimed AS (
  SELECT claimable.id, claimable.organization_id, claimable.subscription_id, claimable.call_id, claimable.event,
         claimable.body, leased.attempt, claimable.schedule_start, leased.token AS lease_token,
         picked.callback_url, picked.secret_ciphertext, picked.degraded, picked.cap,
         -- More of its deliveries are due than this claim took.
         picked.due > count(*) OVER (PARTITION BY claimable.subscription_id) AS backlogged,
         old.attempt AS lost_attempt, old.started_at AS lost_attempt_at
    FROM leased JOIN claimable ON claimable.id = leased.delivery_id JOIN picked ON picked.id = leased.delivery_id
    LEFT JOIN old ON old.delivery_id = leased.delivery_id
),
-- Its worker died (or stalled past the lease) mid-attempt: log that attempt as
-- unknown. The slow worker's own record, if it comes, replaces this placeholder.
lost AS (
  INSERT INTO webhook_attempts (organization_id, delivery_id, subscription_id, attempt, attempted_at, error, error_message, outcome)
  SELECT organization_id, id, subscription_id, lost_attempt, lost_attempt_at, 'lease_expired',
         'the worker sending this attempt stopped before recording its outcome', 'retrying'
    FROM claimed WHERE lost_attempt IS NOT NULL
  ON CONFLICT ON CONSTRAINT webhook_attempts_delivery_attempt_key DO NOTHING
)
SELECT * FROM claimed;

${NEXT_DUE};`;
}

interface MultiResult {
  rows: Record<string, unknown>[];
}

/**
 * The claim's statements are prepared once per connection (PREPARE, so they
 * are planned once, not on every claim: planning the live-grant join costs
 * more than running the claim) and run as EXECUTEs in one simple query. Per
 * connection, the caps its statements are prepared for (the cap is part of their text).
 */
const PREPARED = new WeakMap<object, Set<number>>();
const DUPLICATE_PREPARED_STATEMENT = '42P05';

function prepareStatements(maxInFlight: number): string {
  const [lock, lease, next] = statements(PARAMETERS, maxInFlight)
    .split(/;\n\n/)
    .map((sql) => sql.replace(/;\s*$/, ''));
  return `PREPARE switchboard_claim_lock_${maxInFlight} ${PARAMETER_TYPES} AS ${lock};
PREPARE switchboard_claim_lease_${maxInFlight} ${PARAMETER_TYPES} AS ${lease};
PREPARE switchboard_claim_next_${maxInFlight} AS ${next}`;
}

/** A simple query (several statements allowed) that fails after `deadlineMs` without an answer (no deadline when unset). */
function simpleQuery(client: PoolClient, text: string, deadlineMs: number | undefined) {
  const config: DeadlineQueryConfig = { text, query_timeout: deadlineMs };
  return client.query(config);
}

async function ensurePrepared(client: PoolClient, maxInFlight: number, deadlineMs: number | undefined): Promise<void> {
  const caps = PREPARED.get(client) ?? new Set<number>();
  if (caps.has(maxInFlight)) return;
  try {
    await simpleQuery(client, prepareStatements(maxInFlight), deadlineMs);
  } catch (error) {
    if ((error as { code?: string }).code !== DUPLICATE_PREPARED_STATEMENT) throw error;
  }
  caps.add(maxInFlight);
  PREPARED.set(client, caps);
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
  const maxInFlight = whole('maxInFlight', input.maxInFlight);
  // In the order of PARAMETERS.
  const args = `(${[
    whole('limit', input.limit),
    whole('slowLimit', input.slowLimit),
    whole('leaseMs', input.leaseMs),
    whole('maxSubscriptions', input.maxSubscriptions),
    whole('slowMs', input.slowMs),
    uuidLiteral(input.cursor),
    uuidArrayLiteral(input.hints),
    whole('walk', input.walk),
    uuidArrayLiteral(input.slow),
  ].join(', ')})`;
  // No values: the simple query protocol, which allows several statements.
  // Planned once per connection: a custom plan per claim (PostgreSQL's
  // default for the first executions, and for good when the generic plan's
  // estimate looks worse) costs more than running the claim. That one plan
  // is made at the connection's first claim, often while the table holds a
  // few rows, and then kept: with sequential and bitmap scans allowed, the
  // plan made for a one-page table scanned the whole table twice per claim
  // (to lock the picked rows, then to update them) instead of reaching them
  // by tuple id, and counted live leases through a bitmap and a sort. Every
  // statement of the claim has an index for each table it reads
  // (claim-plan.test.ts).
  const lease =
    'SET LOCAL plan_cache_mode = force_generic_plan; SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; ' +
    `EXECUTE switchboard_claim_lock_${maxInFlight} ${args}; ` +
    `EXECUTE switchboard_claim_lease_${maxInFlight} ${args}`;
  // With a deadline, the server ends the transaction too if the COMMIT never
  // comes (the route to it died silently after the leases were read): its
  // claim locks would otherwise stay held, and other workers skip
  // those subscriptions, until the server's own TCP keepalive (hours).
  const begin = deadlineMs ? `BEGIN; SET LOCAL idle_in_transaction_session_timeout = ${whole('deadlineMs', deadlineMs)}` : 'BEGIN';
  const beginStatements = deadlineMs ? 2 : 1;
  const next = `EXECUTE switchboard_claim_next_${maxInFlight}`;
  // The results after BEGIN (and its SET) and the three plan settings: the lock statement's, then the leases.
  const PLAN_SETTINGS = 3;
  const claimIn = (results: MultiResult[], offset: number) => {
    const lock = results[offset + PLAN_SETTINGS]!.rows[0] as { cursor: string | null; left_over: string[] };
    return {
      claimed: results[offset + PLAN_SETTINGS + 1]!.rows as unknown as ClaimedDelivery[],
      cursor: lock.cursor,
      leftOver: lock.left_over,
    };
  };
  const nextDueIn = (result: MultiResult): Committed => ({ nextDueAt: (result.rows[0]?.at as Date | null | undefined) ?? null });

  if ('release' in db) {
    // A client of the caller's (a test, the benchmark): one implicit transaction, or part of the caller's.
    await ensurePrepared(db, maxInFlight, deadlineMs);
    const results = (await simpleQuery(db, `${lease}; ${next}`, deadlineMs)) as unknown as MultiResult[];
    return { ...claimIn(results, 0), committed: Promise.resolve(nextDueIn(results[PLAN_SETTINGS + 2]!)) };
  }
  const client = await db.connect();
  let results: MultiResult[];
  try {
    await ensurePrepared(client, maxInFlight, deadlineMs);
    results = (await simpleQuery(client, `${begin}; ${lease}`, deadlineMs)) as unknown as MultiResult[];
  } catch (error) {
    // The transaction may be open and aborted, or the connection gone: not fit to reuse.
    client.release(error as Error);
    throw error;
  }
  const committed = (simpleQuery(client, `${next}; COMMIT`, deadlineMs) as unknown as Promise<MultiResult[]>).then(
    (done) => {
      client.release();
      return nextDueIn(done[0]!);
    },
    (error: Error) => {
      client.release(error);
      throw error;
    },
  );
  // Marked handled here; every holder of the claim awaits it and sees the rejection.
  committed.catch(() => {});
  return { ...claimIn(results, beginStatements), committed };
}
