// The delivery worker: claims due deliveries and attempts them, up to
// `concurrency` at once in this process, of which degraded endpoints hold at
// most a share, and per subscription as many as its endpoint's health allows
// across all processes (endpoint-health.ts).
//
// It wakes on NOTIFY (a call completed, a delivery was requeued, a hook was
// re-enabled), when one of its attempts ends (a slot is free), when a retry
// it scheduled comes due, when the database's next due time (read by every
// claim) passes, and on the safety poll. When it claims is decided by
// scheduler.ts and carried out by claim-loop.ts; this module starts and
// stops them (docs/delivery-engine.md, "One round of the worker").
import type { Logger } from 'pino';
import type { Config } from '../../config/config.ts';
import type { Pool } from '../../db/pool.ts';
import { isDatabaseUnavailable } from '../../db/availability.ts';
import type { Metrics } from '../../metrics/metrics.ts';
import { outageWatch, type Outage } from '../../tasks/outage.ts';
import type { Task } from '../../tasks/task.ts';
import { DELIVERIES_CHANNEL, notifyDeliveriesDue } from '../deliveries-channel.queries.ts';
import type { SecretBox } from '../../crypto/secret-box.ts';
import { rememberOpenedSeals } from '../../crypto/opened-seals.ts';
import { RECORD_MARGIN_MS, type AttemptDeps } from './attempt.ts';
import { createClaimLoop, type ClaimLoop } from './claim-loop.ts';
import { claimDue, type Claim, type ClaimCandidates } from './claim.queries.ts';
import { closeDeliveryAgents } from './deliver.ts';
import { healthPolicy, MAX_IN_FLIGHT_PER_SUBSCRIPTION, SLOW_LEASE_MS } from './endpoint-health.ts';
import { handBackLeases } from './hand-back.queries.ts';
import { listen } from './listener.ts';
import { createOutcomeRecorder, type OutcomeRecorder } from './recorder.ts';
import { leaseMsFor } from './retry-policy.ts';

/** Slots of a `switchboard worker` process: attempts it has in flight at most. */
export const DEFAULT_CONCURRENCY = 64;
const DEFAULT_POLL_INTERVAL_MS = 30_000;
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
   * How long a statement of the worker (its claims, outcomes, unsent leases
   * given back and hand-back) may go unanswered before its connection is
   * dropped and the round fails (default: the lease, after which an answer
   * would be of no use). Tests shorten it.
   */
  statementDeadlineMs?: number;
  /** The process's outage watch, shared with its other tasks (src/background.ts); unset: one of its own. */
  outage?: Outage;
}

/** wake(): look for due work now (what a NOTIFY does). */
export type DeliveryWorker = Task;

/**
 * One claim round trip: up to `limit` due deliveries leased, at most
 * `degradedLimit` of them to degraded endpoints (default: any of them), and when
 * to look again. Candidates: the given ones (claim-candidates.ts); unset,
 * every subscription with pending deliveries (tests, tools).
 */
export function claimBatch(
  pool: Pool,
  input: { limit: number; degradedLimit?: number; leaseMs: number; deadlineMs?: number; candidates?: ClaimCandidates },
): Promise<Claim> {
  return claimDue(pool, {
    limit: input.limit,
    degradedLimit: input.degradedLimit ?? input.limit,
    maxSubscriptions: Math.min(MAX_SUBSCRIPTIONS_PER_CLAIM, input.limit),
    maxInFlight: MAX_IN_FLIGHT_PER_SUBSCRIPTION,
    leaseMs: input.leaseMs,
    slowMs: SLOW_LEASE_MS,
    deadlineMs: input.deadlineMs,
    ...(input.candidates ?? { hints: [], cursor: null, walk: WALK_EVERYTHING, degraded: [] }),
  });
}

/** Starts a delivery worker and resolves once it listens and has made its first claim request. */
export async function startDeliveryWorker(options: DeliveryWorkerOptions): Promise<DeliveryWorker> {
  const worker = deliveryWorkerTask(options);
  await worker.start();
  return worker;
}

/** The delivery worker as a task: start() opens its LISTEN connection and wakes its claim loop; stop() drains (drainMs). */
export function deliveryWorkerTask(options: DeliveryWorkerOptions): DeliveryWorker {
  const { pool, log } = options;
  const leaseMs = options.leaseMs ?? leaseMsFor(options.config.webhookTimeoutMs);
  // A connection that died silently (no FIN, no error) would otherwise hold a
  // claim, and with it every later round, until TCP gives up (many minutes).
  const deadlineMs = options.statementDeadlineMs ?? leaseMs;
  if (leaseMs < options.config.webhookTimeoutMs + RECORD_MARGIN_MS) {
    throw new Error(`the delivery lease (${leaseMs} ms) must outlast WEBHOOK_TIMEOUT_MS by at least ${RECORD_MARGIN_MS} ms`);
  }
  // Outcomes are written in batches; each attempt ends (and wakes a claim for its slot) once its batch is committed.
  const recorder = createOutcomeRecorder(pool, { deadlineMs, policy: healthPolicy(options.config.webhookRetryScheduleMs) });
  const loop = createClaimLoop({
    log,
    outage: options.outage ?? outageWatch(log, isDatabaseUnavailable),
    deps: attemptDeps(options, deadlineMs),
    recorder,
    concurrency: options.concurrency ?? DEFAULT_CONCURRENCY,
    pollIntervalMs: options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
    leaseMs,
    claim: (input) => claimBatch(pool, { ...input, leaseMs, deadlineMs }),
  });
  let listener: Promise<{ close(): Promise<void> }> | undefined;
  let stopping: Promise<void> | undefined;
  const stop = async () => {
    loop.dispatch({ type: 'stop' });
    await (await listener?.catch(() => undefined))?.close();
    await loop.claimSettled();
    await stopAttempts(loop, recorder, { ...options, deadlineMs });
  };
  return {
    name: 'webhook-delivery',
    async start() {
      listener ??= listen(options.databaseUrl, DELIVERIES_CHANNEL, loop.notified, log, options.listenHeartbeatMs);
      await listener;
      loop.dispatch({ type: 'wake' });
    },
    wake: () => loop.dispatch({ type: 'wake' }),
    stop() {
      stopping ??= stop();
      return stopping;
    },
  };
}

function attemptDeps(options: DeliveryWorkerOptions, deadlineMs: number): AttemptDeps {
  return {
    pool: options.pool,
    secretBox: rememberOpenedSeals(options.secretBox),
    metrics: options.metrics,
    log: options.log,
    timeoutMs: options.config.webhookTimeoutMs,
    allowPrivate: options.config.webhookAllowPrivateTargets,
    allowedPorts: options.config.webhookAllowedPorts,
    retryScheduleMs: options.config.webhookRetryScheduleMs,
    ...(options.random ? { random: options.random } : {}),
    statementDeadlineMs: deadlineMs,
  };
}

type StopOptions = Pick<DeliveryWorkerOptions, 'pool' | 'log' | 'drainMs'> & { deadlineMs: number };

/** No claim runs any more: the running attempts finish or are handed back, their outcomes are written, the agents close. */
async function stopAttempts(loop: ClaimLoop, recorder: OutcomeRecorder, options: StopOptions): Promise<void> {
  const handedBack = await drain(loop, options);
  await recorder.idle();
  if (handedBack) {
    // Handed-back attempts may still be waiting on their targets: closing
    // the agents gracefully would wait for them, so the process exits
    // without (a late answer is still logged against the attempt).
    void closeDeliveryAgents().catch(() => {});
    return;
  }
  await closeDeliveryAgents();
}

/** Lets running attempts finish for up to drainMs, then hands the rest back; true when some were. */
async function drain(loop: ClaimLoop, options: StopOptions): Promise<boolean> {
  const finished = Promise.allSettled(loop.attempts());
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
  const running = loop.runningLeases();
  if (done || running.length === 0) return false;
  try {
    const handed = await handBackLeases(options.pool, running, options.deadlineMs);
    // Other workers may be idle until their next look: tell them now.
    if (handed.length > 0) await notifyDeliveriesDue(options.pool, options.deadlineMs);
    options.log.warn({ delivery_ids: handed }, 'webhook worker stopping: attempts still running handed back to other workers');
  } catch (error) {
    options.log.error({ err: error }, 'webhook worker stopping: could not hand back running attempts; their leases will expire');
  }
  return true;
}
