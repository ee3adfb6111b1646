// The worker's loop: carries out what the scheduler (scheduler.ts) decides,
// and tells it what happened. It owns the timer, the claims, the running
// attempts (in-flight.ts) and the candidates of the next claim
// (claim-candidates.ts); it decides nothing about when to claim itself.
//
// It never holds a transaction across HTTP: one claim leases as many
// deliveries as there are free slots, its COMMIT is sent at once, and the
// attempts start while that commit is being flushed (it waits for no answer);
// their outcomes are recorded in batches under those leases once the commit
// has succeeded (attempt.ts, recorder.ts; docs/delivery-engine.md, "One round
// of the worker").
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Outage } from '../../tasks/outage.ts';
import { notifiedSubscriptions } from '../deliveries-channel.queries.ts';
import { attemptDelivery, type AttemptDeps } from './attempt.ts';
import { createClaimCandidates, type CandidateTracker } from './claim-candidates.ts';
import type { Claim, ClaimCandidates, LeasedDelivery } from './claim.queries.ts';
import { SLOW_ATTEMPT_MS, degradedSlots } from './endpoint-health.ts';
import { createInFlight, type InFlight, type RunningLease } from './in-flight.ts';
import type { OutcomeRecorder } from './recorder.ts';
import { activeTracing } from '../../tracing/tracing.ts';
import { legacyTraceContext } from '../../tracing/trace-context.ts';
import { initialState, step, type NextLook, type SchedulerAction, type SchedulerEvent, type SchedulerState } from './scheduler.ts';

/** The worker's name as a task (worker.ts), in the outage watch's lines. */
const TASK = 'webhook-delivery';

export interface ClaimLoopOptions {
  log: Logger;
  /** The process's one view of database outages (src/tasks/outage.ts), shared with its other tasks. */
  outage: Outage;
  deps: AttemptDeps;
  recorder: OutcomeRecorder;
  concurrency: number;
  pollIntervalMs: number;
  leaseMs: number;
  /** One claim round trip (worker.ts claimBatch). */
  claim(input: { limit: number; degradedLimit: number; candidates: ClaimCandidates }): Promise<Claim>;
}

export interface ClaimLoop {
  dispatch(event: SchedulerEvent): void;
  /** A NOTIFY on the deliveries channel, with its payload. */
  notified(payload?: string): void;
  /** The claim on its way settles (none: at once). */
  claimSettled(): Promise<void>;
  /** The running attempts: each settles when its outcome is recorded, or its recording failed. */
  attempts(): Promise<void>[];
  /** Their leases, for handing them back. */
  runningLeases(): RunningLease[];
}

/** The loop's own state; the scheduler's is one part of it. */
interface Loop {
  options: ClaimLoopOptions;
  state: SchedulerState;
  timer?: NodeJS.Timeout;
  /** The claim on its way (or the last one). */
  round: Promise<void>;
  attempts: Set<Promise<void>>;
  candidates: CandidateTracker;
  inFlight: InFlight;
}

export function createClaimLoop(options: ClaimLoopOptions): ClaimLoop {
  const candidates = createClaimCandidates();
  const loop: Loop = {
    options,
    state: initialState(options.pollIntervalMs),
    round: Promise.resolve(),
    attempts: new Set(),
    candidates,
    inFlight: createInFlight({
      concurrency: options.concurrency,
      degradedShare: degradedSlots(options.concurrency),
      slowAfterMs: SLOW_ATTEMPT_MS,
      turnedSlow: (overShare) => dispatch(loop, { type: 'attempt-turned-slow', overShare, dueHints: candidates.hasDueHints() }),
    }),
  };
  return {
    dispatch: (event) => dispatch(loop, event),
    notified: (payload) => notified(loop, payload),
    claimSettled: () => loop.round,
    attempts: () => [...loop.attempts],
    runningLeases: () => loop.inFlight.leases(),
  };
}

function dispatch(loop: Loop, event: SchedulerEvent): void {
  const next = step(loop.state, event);
  loop.state = next.state;
  for (const action of next.actions) perform(loop, action);
}

function perform(loop: Loop, action: SchedulerAction): void {
  switch (action.type) {
    case 'claim':
      loop.round = claim(loop);
      return;
    case 'set-timer':
      clearTimeout(loop.timer);
      loop.timer = setTimeout(() => dispatch(loop, { type: 'timer-fired', now: Date.now() }), action.delayMs);
      loop.timer.unref();
      return;
    case 'clear-timer':
      clearTimeout(loop.timer);
      return;
    case 'sweep':
      loop.candidates.sweep(action.soon);
      return;
  }
}

function look({ candidates }: Loop): NextLook {
  return { now: Date.now(), hintAt: candidates.nextHintAt(), sweepAt: candidates.sweepAt() };
}

async function claim(loop: Loop): Promise<void> {
  const { options, candidates, inFlight } = loop;
  const startedAt = Date.now();
  try {
    const { limit, degradedLimit } = inFlight.free();
    if (limit <= 0) return dispatch(loop, { type: 'no-free-slots', look: look(loop) });
    const looking = { ...candidates.next(), degraded: inFlight.degradedSubscriptions() };
    // The database set the lease after this moment, so it lasts at least until claimStarted + leaseMs.
    const claimStarted = performance.now();
    const { claimed, cursor, leftOver, committed } = await tracedClaim(() => options.claim({ limit, degradedLimit, candidates: looking }));
    // The attempts start now; the commit, already sent, settles while they run and says when to look again.
    for (const delivery of claimed) launch(loop, delivery, claimStarted + options.leaseMs, committed);
    const sweeping = candidates.claimed({ passed: looking.hints, cursor, leftOver });
    const { nextDueAt } = await committed;
    // Only while an outage is on record: a claim with the database up costs nothing more.
    if (options.outage.down) options.outage.reachable(TASK);
    dispatch(loop, {
      type: 'claimed',
      filled: claimed.length === limit,
      took: claimed.length > 0,
      leftOver: leftOver.length > 0,
      sweeping,
      nextDueAt: nextDueAt?.getTime() ?? null,
      look: look(loop),
    });
  } catch (error) {
    // A database outage is logged once by the shared watch (a later successful claim ends it), not every round.
    if (!options.outage.away(TASK, error, startedAt)) options.log.error({ err: error }, 'webhook delivery worker round failed');
    dispatch(loop, { type: 'claim-failed', now: Date.now() });
  }
}

/**
 * While traces are exported, a claim is a span of its own (it serves many
 * calls), linked to the trace of each delivery it leased.
 */
function tracedClaim(run: () => Promise<Claim>): Promise<Claim> {
  const tracing = activeTracing();
  if (!tracing) return run();
  return tracing.batch('claim deliveries', [], async (span) => {
    const claim = await run();
    span.setAttributes({ 'switchboard.batch.size': claim.claimed.length });
    for (const delivery of claim.claimed) span.link(delivery.trace_context ?? legacyTraceContext(delivery.call_id));
    return claim;
  });
}

function launch(loop: Loop, delivery: LeasedDelivery, leaseDeadline: number, committed: Promise<unknown>): void {
  const { options, candidates, inFlight } = loop;
  const subscriptionId = delivery.subscription_id;
  inFlight.start({ id: delivery.id, leaseToken: delivery.lease_token, subscriptionId, cap: delivery.cap, degraded: delivery.degraded });
  const startedAt = Date.now();
  const task: Promise<void> = attemptDelivery(options.deps, delivery, leaseDeadline, { recorder: options.recorder, committed })
    .then((dueAgain) => {
      if (!dueAgain) return;
      candidates.hint(subscriptionId, dueAgain.getTime());
      dispatch(loop, { type: 'retry-due', at: dueAgain.getTime(), now: Date.now() });
    })
    .catch((error) => {
      // Its lease will expire and it will be retried. A database outage is logged once, not per attempt.
      if (!options.outage.away(TASK, error, startedAt))
        options.log.error(
          { err: error, delivery_id: delivery.id },
          'webhook delivery attempt could not be recorded; its lease will expire and it will be retried',
        );
    })
    .finally(() => {
      // Its subscription may have more due than its cap let the claims take: look at it again.
      if (delivery.backlogged || inFlight.atCap(subscriptionId)) candidates.hint(subscriptionId);
      inFlight.end(delivery.id);
      loop.attempts.delete(task);
      dispatch(loop, { type: 'attempt-ended', dueHints: candidates.hasDueHints() });
    });
  loop.attempts.add(task);
}

/**
 * A NOTIFY naming only subscriptions of which this worker itself runs as
 * many attempts as the cap allows needs no claim: the cap counts live leases
 * across all workers, so no claim can lease anything of theirs until one of
 * these attempts ends (a slow receiver otherwise costs an empty claim per
 * completed call). Their new work is remembered as hints, so the next
 * attempt to finish claims it. A NOTIFY that names none asks for a sweep.
 */
function notified(loop: Loop, payload?: string): void {
  const notified = notifiedSubscriptions(payload);
  for (const id of notified ?? []) loop.candidates.notified(id);
  const allAtCap = notified?.every((id) => loop.inFlight.atCap(id)) ?? false;
  dispatch(loop, { type: 'notified', listsNone: notified === null, allAtCap });
}
