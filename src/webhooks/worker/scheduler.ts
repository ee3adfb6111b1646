// When the worker's next claim runs, decided in one place: a pure function
// from the worker's state and what just happened to its next state and what
// the worker must do (start a claim, set or clear its timer, ask the
// candidates for a sweep). The claim loop (claim-loop.ts) only carries these out; the
// states and their transitions are drawn in docs/delivery-engine.md, "One
// round of the worker".
//
//   idle            no claim runs; the timer, if set, fires at `timerAt`;
//   claiming        one claim round trip is on its way;
//   claiming-again  one is on its way and a wake-up came meanwhile: once it
//                   ends, another claim starts at once;
//   stopped         no claim starts again (a claim on its way ends).
//
// Times are ms since the epoch, given with each event that needs one.

/** After a round that found due work it could not take (caps), look again this soon. */
export const BLOCKED_RETRY_MS = 1000;
/** After a failed round the next one waits this long, doubling up to ERROR_RETRY_MAX_MS while failures last. */
export const ERROR_RETRY_MS = 1000;
export const ERROR_RETRY_MAX_MS = 10_000;

export type Phase = 'idle' | 'claiming' | 'claiming-again' | 'stopped';

export interface SchedulerState {
  phase: Phase;
  /** The safety poll: no look is ever planned further ahead than this. */
  pollIntervalMs: number;
  /** When the timer fires, or Infinity when none is set. */
  timerAt: number;
  /** A timer firing at or after this asks for a sweep (work no hint names comes due, or the safety poll). */
  sweepAt: number;
  /** The last claim took as many deliveries as it had free slots: more may be due. */
  filled: boolean;
  /** This round's claims found due work locked by another worker's claim, which they could not take. */
  leftOver: boolean;
  /** The database's next due time, as this round's last committed claim read it. */
  nextDueAt: number | null;
  /** The pause after the next failed round. */
  errorRetryMs: number;
}

export type SchedulerEvent =
  /** Look for due work now: the start, a test or tool, a NOTIFY (see `notified`). */
  | { type: 'wake' }
  /**
   * A NOTIFY. `listsNone`: it names no subscription (look at everything: a
   * sweep). `allAtCap`: every subscription it names already runs as many of
   * this worker's attempts as its cap allows, so no claim could take their
   * work until one of them ends (which wakes a claim then).
   */
  | { type: 'notified'; listsNone: boolean; allAtCap: boolean }
  | { type: 'timer-fired'; now: number }
  /** One of this worker's attempts knows its subscription has work due again at `at` (a retry, a circuit's wait). */
  | { type: 'retry-due'; at: number; now: number }
  /** An attempt ended and freed its slot; `dueHints`: the candidates hold work due now. */
  | { type: 'attempt-ended'; dueHints: boolean }
  /** A running attempt turned slow; `overShare`: the degraded share was full, so its fast slot is free for others. */
  | { type: 'attempt-turned-slow'; overShare: boolean; dueHints: boolean }
  /** Every slot is taken: the claim was not sent (a finishing attempt wakes the next). */
  | { type: 'no-free-slots'; look: NextLook }
  /** A claim committed. */
  | {
      type: 'claimed';
      /** It took as many deliveries as it had free slots. */
      filled: boolean;
      /** It took some. */
      took: boolean;
      /** It left due work another worker's claim held locked. */
      leftOver: boolean;
      /** Its candidates' sweep goes on. */
      sweeping: boolean;
      nextDueAt: number | null;
      look: NextLook;
    }
  /** A claim (or its commit) failed. */
  | { type: 'claim-failed'; now: number }
  | { type: 'stop' };

/** What the candidates (claim-candidates.ts) know when a round ends. */
export interface NextLook {
  now: number;
  /** The earliest hint not due yet, or Infinity. */
  hintAt: number;
  /** When the sweep they wait for may start, or Infinity. */
  sweepAt: number;
}

export type SchedulerAction =
  | { type: 'claim' }
  /** (Re)set the timer to fire in `delayMs`. */
  | { type: 'set-timer'; delayMs: number }
  | { type: 'clear-timer' }
  /** Ask the candidates for a sweep; `soon`: after the shorter interval (a NOTIFY's). */
  | { type: 'sweep'; soon: boolean };

export interface Step {
  state: SchedulerState;
  actions: SchedulerAction[];
}

export function initialState(pollIntervalMs: number): SchedulerState {
  return {
    phase: 'idle',
    pollIntervalMs,
    timerAt: Infinity,
    sweepAt: Infinity,
    filled: true,
    leftOver: false,
    nextDueAt: null,
    errorRetryMs: ERROR_RETRY_MS,
  };
}

export function step(state: SchedulerState, event: SchedulerEvent): Step {
  if (state.phase === 'stopped') return { state, actions: [] };
  switch (event.type) {
    case 'wake':
      return wake(state, []);
    case 'notified': {
      const actions: SchedulerAction[] = event.listsNone ? [{ type: 'sweep', soon: true }] : [];
      return event.allAtCap && !event.listsNone ? { state, actions } : wake(state, actions);
    }
    case 'timer-fired': {
      const fired = { ...state, timerAt: Infinity };
      return wake(fired, event.now >= state.sweepAt ? [{ type: 'sweep', soon: false }] : []);
    }
    case 'retry-due':
      return lookBy(state, event.at, event.now, []);
    case 'attempt-ended':
      // A freed slot matters only if due work may be waiting for one; new work announces
      // itself by NOTIFY, retries through hints, and the rest through sweeps.
      return state.filled || event.dueHints ? wake(state, []) : { state, actions: [] };
    case 'attempt-turned-slow':
      return event.overShare && (state.filled || event.dueHints) ? wake(state, []) : { state, actions: [] };
    case 'no-free-slots':
      return thenAgain(state, endRound(state, event.look));
    case 'claimed':
      return claimed(state, event);
    case 'claim-failed':
      return claimFailed(state, event.now);
    case 'stop':
      return { state: { ...state, phase: 'stopped', timerAt: Infinity }, actions: [{ type: 'clear-timer' }] };
  }
}

/** Claim now, or right after the claim on its way. */
function wake(state: SchedulerState, actions: SchedulerAction[]): Step {
  if (state.phase === 'idle') return { state: startRound(state), actions: [...actions, { type: 'claim' }] };
  return { state: { ...state, phase: 'claiming-again' }, actions };
}

function startRound(state: SchedulerState): SchedulerState {
  return { ...state, phase: 'claiming', leftOver: false, nextDueAt: null };
}

/** Look again at `at` unless a look is planned sooner already (an early look costs one empty claim). */
function lookBy(state: SchedulerState, at: number, now: number, actions: SchedulerAction[]): Step {
  if (at >= state.timerAt) return { state, actions };
  const delayMs = Math.max(0, Math.min(at - now, state.pollIntervalMs));
  return { state: { ...state, timerAt: now + delayMs }, actions: [...actions, { type: 'set-timer', delayMs }] };
}

function claimed(state: SchedulerState, event: Extract<SchedulerEvent, { type: 'claimed' }>): Step {
  const after = { ...state, filled: event.filled, leftOver: event.leftOver, nextDueAt: event.nextDueAt };
  // More to look at: every slot was filled, or more subscriptions have due work than one claim locks, or a
  // sweep goes on; or a wake-up (a NOTIFY, a freed slot) came while this claim ran.
  const more = event.filled || (event.leftOver && event.took) || event.sweeping || state.phase === 'claiming-again';
  if (more) return { state: { ...after, phase: 'claiming' }, actions: [{ type: 'claim' }] };
  return endRound(after, event.look);
}

/**
 * The round ends: look again at the first of this worker's hints, due work no
 * hint of its own names (the database's next due time, when it is sooner: a
 * sweep finds it), a sweep waiting for its interval, left-over work another
 * worker's claim held locked; else at the safety poll (a sweep).
 */
function endRound(state: SchedulerState, look: NextLook): Step {
  const { now, hintAt } = look;
  const unknownAt = state.nextDueAt !== null && state.nextDueAt < hintAt ? state.nextDueAt : Infinity;
  const next = Math.min(hintAt, unknownAt, look.sweepAt, state.leftOver ? now + BLOCKED_RETRY_MS : Infinity);
  const ended: SchedulerState = {
    ...state,
    phase: 'idle',
    sweepAt: Math.min(unknownAt, now + state.pollIntervalMs),
    errorRetryMs: ERROR_RETRY_MS,
  };
  return lookBy(ended, now + Math.min(next === Infinity ? state.pollIntervalMs : Math.max(0, next - now), state.pollIntervalMs), now, []);
}

/**
 * A failed claim ends the round. A claim whose commit failed ends here too: its attempts were cut and are
 * not recorded, and the deliveries, still pending, are looked for after a pause (a sweep), not as each cut
 * attempt ends. A wake-up that came meanwhile claims at once.
 */
function claimFailed(state: SchedulerState, now: number): Step {
  const failed: SchedulerState = {
    ...state,
    phase: 'idle',
    filled: false,
    errorRetryMs: Math.min(ERROR_RETRY_MAX_MS, state.errorRetryMs * 2),
  };
  return thenAgain(state, lookBy(failed, now + Math.min(state.errorRetryMs, state.pollIntervalMs), now, [{ type: 'sweep', soon: true }]));
}

/** A round that ended while a wake-up waited (`before`: the state it ended from) starts the next one at once. */
function thenAgain(before: SchedulerState, ended: Step): Step {
  if (before.phase !== 'claiming-again') return ended;
  return { state: startRound(ended.state), actions: [...ended.actions, { type: 'claim' }] };
}
