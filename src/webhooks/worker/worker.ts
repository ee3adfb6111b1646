// The delivery worker: claims due deliveries and attempts them, up to
// `concurrency` at once in this process, of which degraded endpoints hold at
// most a share, and per subscription as many as its endpoint's health allows
// across all processes (endpoint-health.ts).
//
// It wakes on NOTIFY (a call completed, a delivery was requeued, a hook was
// re-enabled), when a batch of its own outcomes is recorded (slots are free),
// when a retry it scheduled comes due, when the database's next due time
// (read by every claim) passes, and on a slow safety poll; each claim looks at
// a few candidate subscriptions (claim-candidates.ts). It never holds a transaction across HTTP: one claim
// statement batch leases as many deliveries as there are free slots, its
// COMMIT is sent at once, and the attempts start while that commit is being
// flushed (it waits for no answer); their outcomes are recorded in batches
// under those leases once the commit has succeeded (see claim.queries.ts,
// attempt.ts and recorder.ts, and docs/decisions.md).
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { BackgroundTask } from '../../background.ts';
import type { Config } from '../../config/config.ts';
import type { Pool } from '../../db/pool.ts';
import { isDatabaseUnavailable, outageLog } from '../../db/availability.ts';
import type { Metrics } from '../../metrics/metrics.ts';
import { DELIVERIES_CHANNEL, notifyDeliveriesDue, subscriptionsNamed } from '../deliveries.queries.ts';
import type { SecretBox } from '../../crypto/secret-box.ts';
import { attemptDelivery, RECORD_MARGIN_MS, type AttemptDeps } from './attempt.ts';
import { createClaimCandidates } from './claim-candidates.ts';
import { claimDue, type Claim, type ClaimCandidates, type ClaimedDelivery } from './claim.queries.ts';
import { closeDeliveryAgents } from './deliver.ts';
import { healthPolicy, MAX_IN_FLIGHT_PER_SUBSCRIPTION, SLOW_ATTEMPT_MS, SLOW_LEASE_MS, slowSlots } from './endpoint-health.ts';
import { handBackLeases } from './hand-back.queries.ts';
import { listen, type Listener } from './listener.ts';
import { createOutcomeRecorder } from './recorder.ts';
import { leaseMsFor } from './retry-policy.ts';

/** Slots of a `switchboard worker` process: attempts it has in flight at most. */
export const DEFAULT_CONCURRENCY = 64;
const DEFAULT_POLL_INTERVAL_MS = 30_000;
/** After a round that found due work it could not take (caps), look again this soon. */
const BLOCKED_RETRY_MS = 1000;
/** After a failed round the next one waits this long, doubling up to ERROR_RETRY_MAX_MS while failures last. */
const ERROR_RETRY_MS = 1000;
const ERROR_RETRY_MAX_MS = 10_000;
const MAX_SUBSCRIPTIONS_PER_CLAIM = 50;
/** A walk long enough to visit every subscription (claimBatch without candidates). */
const WALK_EVERYTHING = 1_000_000;

export interface DeliveryWorkerOptions {
  pool: Pool;
  /** For the dedicated LISTEN connection. */
  databaseUrl: string;
  config: Pick<Config, 'webhookTimeoutMs' | 'webhookRetryScheduleMs' | 'webhookAllowPrivateTargets' | 'webhookAllowedPorts'>;
  log: Logger;
  metrics: Metrics;
  secretBox: SecretBox;
  concurrency?: number;
  pollIntervalMs?: number;
  leaseMs?: number;
  random?: () => number;
  /**
   * How long stop() lets running attempts finish; those still running then are
   * handed back (lease released, due now) so another worker takes them at
   * once. Unset: stop() waits for every attempt.
   */
  drainMs?: number;
  /** The LISTEN connection's heartbeat (listener.ts); tests shorten it. */
  listenHeartbeatMs?: number;
  /**
   * How long a statement of the worker (its claims, outcomes, unsent claims
   * given back and hand-back) may go unanswered before its connection is
   * dropped and the round fails (default: the lease, after which an answer
   * would be of no use). Tests shorten it.
   */
  statementDeadlineMs?: number;
}

interface RunningClaim {
  id: string;
  leaseToken: string;
  subscriptionId: string;
  /** Its subscription's cap on attempts in flight when claimed. */
  cap: number;
  /** Holds a slow slot. */
  slow: boolean;
  slowTimer?: NodeJS.Timeout;
}

export interface DeliveryWorker extends BackgroundTask {
  /** Look for due work now (what a NOTIFY does). */
  wake(): void;
}

/**
 * One claim round trip: up to `limit` due deliveries leased, at most
 * `slowLimit` of them to degraded endpoints (default: any of them), and when
 * to look again. Candidates: the given ones (claim-candidates.ts); unset,
 * every subscription with pending deliveries (tests, tools).
 */
export function claimBatch(
  pool: Pool,
  input: { limit: number; slowLimit?: number; leaseMs: number; deadlineMs?: number; candidates?: ClaimCandidates },
): Promise<Claim> {
  return claimDue(pool, {
    limit: input.limit,
    slowLimit: input.slowLimit ?? input.limit,
    maxSubscriptions: Math.min(MAX_SUBSCRIPTIONS_PER_CLAIM, input.limit),
    maxInFlight: MAX_IN_FLIGHT_PER_SUBSCRIPTION,
    leaseMs: input.leaseMs,
    slowMs: SLOW_LEASE_MS,
    deadlineMs: input.deadlineMs,
    ...(input.candidates ?? { hints: [], cursor: null, walk: WALK_EVERYTHING, slow: [] }),
  });
}

export async function startDeliveryWorker(options: DeliveryWorkerOptions): Promise<DeliveryWorker> {
  const { pool, log } = options;
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  const leaseMs = options.leaseMs ?? leaseMsFor(options.config.webhookTimeoutMs);
  // A connection that died silently (no FIN, no error) would otherwise hold a
  // claim, and with it every later round, until TCP gives up (many minutes).
  const deadlineMs = options.statementDeadlineMs ?? leaseMs;
  if (leaseMs < options.config.webhookTimeoutMs + RECORD_MARGIN_MS) {
    throw new Error(`the delivery lease (${leaseMs} ms) must outlast WEBHOOK_TIMEOUT_MS by at least ${RECORD_MARGIN_MS} ms`);
  }
  const deps: AttemptDeps = {
    pool,
    secretBox: options.secretBox,
    metrics: options.metrics,
    log,
    timeoutMs: options.config.webhookTimeoutMs,
    allowPrivate: options.config.webhookAllowPrivateTargets,
    allowedPorts: options.config.webhookAllowedPorts,
    retryScheduleMs: options.config.webhookRetryScheduleMs,
    ...(options.random ? { random: options.random } : {}),
    statementDeadlineMs: deadlineMs,
  };

  const inFlight = new Set<Promise<void>>();
  // Outcomes are written in batches; each attempt ends (and wakes a claim for its slot) once its batch is committed.
  const recorder = createOutcomeRecorder(pool, { deadlineMs, policy: healthPolicy(options.config.webhookRetryScheduleMs) });
  const slowShare = slowSlots(concurrency);
  /** The claims of the running attempts, for handing them back when stopping (and counting them per subscription). */
  const runningClaims = new Map<string, RunningClaim>();
  /** Running attempts that hold a slow slot: degraded when claimed, or running longer than SLOW_ATTEMPT_MS. */
  let slowRunning = 0;
  const outage = outageLog(pool, log, 'webhook-worker');
  let errorRetryMs = ERROR_RETRY_MS;
  let stopping = false;
  let running = false;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  /** The last claim took as many deliveries as it had free slots: more may be due. */
  let filled = true;
  const candidates = createClaimCandidates();
  /** A freed slot is worth a claim when more work may be due than the last claim could take. */
  const moreDue = () => filled || candidates.hasDueHints();
  let round: Promise<void> = Promise.resolve();

  let timerAt = Infinity;
  /** When a sweep is due: work no hint names comes due, or the safety poll. */
  let sweepAt = Infinity;
  const schedule = (delayMs: number) => {
    clearTimeout(timer);
    timerAt = Infinity;
    if (stopping) return;
    const delay = Math.max(0, Math.min(delayMs, pollIntervalMs));
    timerAt = Date.now() + delay;
    timer = setTimeout(() => {
      timerAt = Infinity;
      if (Date.now() >= sweepAt) candidates.sweep();
      wake();
    }, delay);
    timer.unref();
  };
  /** Look again at `at` unless a look is planned sooner already (an early look costs one empty claim). */
  const wakeBy = (at: Date) => {
    if (at.getTime() < timerAt) schedule(at.getTime() - Date.now());
  };
  const later = (delayMs: number) => wakeBy(new Date(Date.now() + Math.min(delayMs, pollIntervalMs)));

  /**
   * Free slots: attempts to healthy endpoints may take any of them; degraded
   * ones hold at most `slowShare`. Attempts that turned slow while running
   * stop counting once the share is full, so healthy endpoints always have
   * concurrency - slowShare slots at least.
   */
  const freeSlots = () => {
    const fast = runningClaims.size - slowRunning;
    const limit = Math.max(0, concurrency - fast - Math.min(slowRunning, slowShare));
    return { limit, slowLimit: Math.max(0, Math.min(slowShare - slowRunning, limit)) };
  };

  const launch = (leaseDeadline: number, committed: Promise<unknown>) => (delivery: ClaimedDelivery) => {
    const claim: RunningClaim = {
      id: delivery.id,
      leaseToken: delivery.lease_token,
      subscriptionId: delivery.subscription_id,
      cap: delivery.cap,
      slow: delivery.degraded,
    };
    runningClaims.set(delivery.id, claim);
    if (claim.slow) slowRunning++;
    else {
      // Still running after SLOW_ATTEMPT_MS: its slot counts as a slow one from now on.
      claim.slowTimer = setTimeout(() => {
        claim.slow = true;
        slowRunning++;
        // Past the slow share, a slot turning slow frees one for the others.
        if (slowRunning > slowShare && moreDue()) wake();
      }, SLOW_ATTEMPT_MS);
      claim.slowTimer.unref();
    }
    const task: Promise<void> = attemptDelivery(deps, delivery, leaseDeadline, { recorder, committed })
      .then((dueAgain) => {
        if (!dueAgain) return;
        candidates.hint(delivery.subscription_id, dueAgain.getTime());
        wakeBy(dueAgain);
      })
      .catch((error) => {
        // Its lease will expire and it will be retried. A database outage is logged once, not per attempt.
        if (isDatabaseUnavailable(error)) outage.failed(error);
        else
          log.error(
            { err: error, delivery_id: delivery.id },
            'webhook delivery attempt could not be recorded; its lease will expire and it will be retried',
          );
      })
      .finally(() => {
        // Its subscription may have more due than its cap let the claims take: look at it again.
        if (delivery.backlogged || atCap(delivery.subscription_id)) candidates.hint(delivery.subscription_id);
        clearTimeout(claim.slowTimer);
        if (claim.slow) slowRunning--;
        runningClaims.delete(delivery.id);
        inFlight.delete(task);
        // A freed slot matters only if due work may be waiting for one; new work announces
        // itself by NOTIFY, retries through hints, and the rest through sweeps.
        if (moreDue()) wake();
      });
    inFlight.add(task);
  };

  const runRound = async () => {
    let due: Date | null | undefined;
    let leftOver = false;
    try {
      do {
        again = false;
        const { limit: free, slowLimit } = freeSlots();
        if (free <= 0) break; // a finishing attempt wakes us
        const looking = { ...candidates.next(), slow: slowSubscriptions() };
        // The database set the lease after this moment, so it lasts at least until claimStarted + leaseMs.
        const claimStarted = performance.now();
        const {
          claimed,
          cursor,
          leftOver: left,
          committed,
        } = await claimBatch(pool, { limit: free, slowLimit, leaseMs, deadlineMs, candidates: looking });
        // The attempts start now; the commit, already sent, settles while they run and says when to look again.
        claimed.forEach(launch(claimStarted + leaseMs, committed));
        const sweeping = candidates.claimed({ passed: looking.hints, cursor, leftOver: left });
        const { nextDueAt } = await committed;
        due = nextDueAt;
        filled = claimed.length === free;
        leftOver = left.length > 0;
        // Claimed while stopping: attempted anyway; stop() waits for them.
        if (stopping) break;
        // More to look at: every slot was filled, or more subscriptions have due work than one claim locks, or a sweep
        // goes on; or a wake-up (a NOTIFY, a freed slot) came while this claim ran and set `again` already.
        if (filled || (leftOver && claimed.length > 0) || sweeping) again = true;
      } while (again && !stopping);
      // Look again at the first of: this worker's hints, due work no hint of its own names (the
      // database's next due time, when it is sooner: a sweep finds it), a sweep waiting for its
      // interval, left-over work another worker's claim held locked; else at the safety poll (a sweep).
      const now = Date.now();
      const hintAt = candidates.nextHintAt();
      const unknownAt = due && due.getTime() < hintAt ? due.getTime() : Infinity;
      const next = Math.min(hintAt, unknownAt, candidates.sweepAt(), leftOver ? now + BLOCKED_RETRY_MS : Infinity);
      sweepAt = Math.min(unknownAt, now + pollIntervalMs);
      later(next === Infinity ? pollIntervalMs : Math.max(0, next - now));
      errorRetryMs = ERROR_RETRY_MS;
    } catch (error) {
      // A database outage is logged once (the pool's reconnection ends it), not every round.
      if (isDatabaseUnavailable(error)) outage.failed(error);
      else log.error({ err: error }, 'webhook delivery worker round failed');
      // A claim whose commit failed ends here too: its attempts were cut and are not recorded, and
      // the deliveries, still pending, are looked for after this pause (a sweep), not as each cut attempt ends.
      filled = false;
      candidates.sweep(true);
      later(errorRetryMs);
      errorRetryMs = Math.min(ERROR_RETRY_MAX_MS, errorRetryMs * 2);
    }
  };

  function wake() {
    if (stopping) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    round = runRound().finally(() => {
      running = false;
      if (again && !stopping) wake();
    });
  }

  /** Lets running attempts finish for up to drainMs, then hands the rest back; true when some were. */
  async function drain(): Promise<boolean> {
    const finished = Promise.allSettled([...inFlight]);
    if (options.drainMs === undefined) {
      await finished;
      return false;
    }
    let timeout: NodeJS.Timeout | undefined;
    const done = await Promise.race([
      finished.then(() => true),
      new Promise<false>((resolve) => (timeout = setTimeout(() => resolve(false), options.drainMs))),
    ]);
    clearTimeout(timeout);
    if (done || runningClaims.size === 0) return false;
    try {
      const handed = await handBackLeases(pool, [...runningClaims.values()], deadlineMs);
      // Other workers may be idle until their next look: tell them now.
      if (handed.length > 0) await notifyDeliveriesDue(pool, deadlineMs);
      log.warn({ delivery_ids: handed }, 'webhook worker stopping: attempts still running handed back to other workers');
    } catch (error) {
      log.error({ err: error }, 'webhook worker stopping: could not hand back running attempts; their leases will expire');
    }
    return true;
  }

  /**
   * A NOTIFY naming only subscriptions of which this worker itself runs as
   * many attempts as the cap allows needs no claim: the cap counts live leases
   * across all workers, so no claim can lease anything of theirs until one of
   * these attempts ends (a slow receiver otherwise costs an empty claim per
   * completed call). Their new work is remembered as hints, so the next
   * attempt to finish claims it. A NOTIFY that names none asks for a sweep.
   */
  const onNotification = (payload?: string) => {
    const named = subscriptionsNamed(payload);
    if (!named) candidates.sweep(true);
    for (const id of named ?? []) candidates.named(id);
    if (named?.every(atCap)) return;
    wake();
  };
  /** Subscriptions of this worker's attempts that hold slow slots. */
  const slowSubscriptions = () => [
    ...new Set([...runningClaims.values()].filter((claim) => claim.slow).map((claim) => claim.subscriptionId)),
  ];
  /** This worker runs as many attempts of the subscription as its cap allowed when they were claimed. */
  const atCap = (subscriptionId: string) => {
    let n = 0;
    let cap = Infinity;
    for (const claim of runningClaims.values()) {
      if (claim.subscriptionId !== subscriptionId) continue;
      n++;
      cap = Math.min(cap, claim.cap);
    }
    return n > 0 && n >= cap;
  };

  const listener: Listener = await listen(options.databaseUrl, DELIVERIES_CHANNEL, onNotification, log, options.listenHeartbeatMs);
  wake();

  return {
    name: 'webhook-delivery',
    wake,
    async stop() {
      stopping = true;
      clearTimeout(timer);
      await listener.close();
      await round;
      const handedBack = await drain();
      await recorder.idle();
      if (handedBack) {
        // Handed-back attempts may still be waiting on their targets: closing
        // the agents gracefully would wait for them, so the process exits
        // without (a late answer is still logged against the attempt).
        void closeDeliveryAgents().catch(() => {});
        return;
      }
      await closeDeliveryAgents();
    },
  };
}
