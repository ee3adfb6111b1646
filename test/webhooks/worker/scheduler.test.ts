// When the worker claims: the scheduler's transitions, as a pure function
// (no database, no timers).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  BLOCKED_RETRY_MS,
  ERROR_RETRY_MAX_MS,
  ERROR_RETRY_MS,
  initialState,
  step,
  type NextLook,
  type SchedulerEvent,
  type SchedulerState,
} from '../../../src/webhooks/worker/scheduler.ts';

const POLL = 30_000;
const NOW = 1_000_000;
const nothingKnown: NextLook = { now: NOW, hintAt: Infinity, sweepAt: Infinity };
const claimed = (over: Partial<Extract<SchedulerEvent, { type: 'claimed' }>> = {}): SchedulerEvent => ({
  type: 'claimed',
  filled: false,
  took: false,
  leftOver: false,
  sweeping: false,
  nextDueAt: null,
  look: nothingKnown,
  ...over,
});
const idle = (over: Partial<SchedulerState> = {}): SchedulerState => ({ ...initialState(POLL), ...over });
const claiming = (over: Partial<SchedulerState> = {}): SchedulerState => idle({ phase: 'claiming', ...over });

/** Runs the events from `state`; returns the last state and every action, in order. */
function run(state: SchedulerState, ...events: SchedulerEvent[]) {
  const actions = [];
  for (const event of events) {
    const next = step(state, event);
    state = next.state;
    actions.push(...next.actions);
  }
  return { state, actions };
}

describe('worker scheduler: wake-ups', () => {
  test('a wake-up while idle starts a claim', () => {
    assert.deepEqual(run(idle(), { type: 'wake' }), { state: claiming(), actions: [{ type: 'claim' }] });
  });

  test('a wake-up while a claim is on its way claims again once it ends, and only once', () => {
    const woken = run(claiming(), { type: 'wake' }, { type: 'wake' });
    assert.equal(woken.state.phase, 'claiming-again');
    assert.deepEqual(woken.actions, []);
    const ended = run(woken.state, claimed());
    assert.equal(ended.state.phase, 'claiming');
    assert.deepEqual(ended.actions, [{ type: 'claim' }]);
  });

  test('a NOTIFY naming only subscriptions at their cap in this worker claims nothing', () => {
    assert.deepEqual(run(idle(), { type: 'notified', listsNone: false, allAtCap: true }).actions, []);
    assert.deepEqual(run(idle(), { type: 'notified', listsNone: false, allAtCap: false }).actions, [{ type: 'claim' }]);
  });

  test('a NOTIFY naming none asks for a sweep soon and claims', () => {
    assert.deepEqual(run(idle(), { type: 'notified', listsNone: true, allAtCap: false }).actions, [
      { type: 'sweep', soon: true },
      { type: 'claim' },
    ]);
  });

  test('a finished attempt claims only when more work may be due', () => {
    assert.deepEqual(run(idle({ filled: true }), { type: 'attempt-ended', dueHints: false }).actions, [{ type: 'claim' }]);
    assert.deepEqual(run(idle({ filled: false }), { type: 'attempt-ended', dueHints: true }).actions, [{ type: 'claim' }]);
    assert.deepEqual(run(idle({ filled: false }), { type: 'attempt-ended', dueHints: false }).actions, []);
  });

  test('an attempt turning slow frees a slot only past the degraded share', () => {
    assert.deepEqual(run(idle(), { type: 'attempt-turned-slow', overShare: false, dueHints: true }).actions, []);
    assert.deepEqual(run(idle({ filled: false }), { type: 'attempt-turned-slow', overShare: true, dueHints: false }).actions, []);
    assert.deepEqual(run(idle(), { type: 'attempt-turned-slow', overShare: true, dueHints: false }).actions, [{ type: 'claim' }]);
  });
});

describe('worker scheduler: the timer', () => {
  test('a due retry sets the timer unless an earlier look is planned', () => {
    const set = run(idle(), { type: 'retry-due', at: NOW + 5000, now: NOW });
    assert.deepEqual(set.actions, [{ type: 'set-timer', delayMs: 5000 }]);
    assert.equal(set.state.timerAt, NOW + 5000);
    assert.deepEqual(run(set.state, { type: 'retry-due', at: NOW + 6000, now: NOW }).actions, []);
    assert.deepEqual(run(set.state, { type: 'retry-due', at: NOW + 1000, now: NOW }).actions, [{ type: 'set-timer', delayMs: 1000 }]);
  });

  test('no look is planned beyond the safety poll, nor in the past', () => {
    assert.deepEqual(run(idle(), { type: 'retry-due', at: NOW + 10 * POLL, now: NOW }).actions, [{ type: 'set-timer', delayMs: POLL }]);
    assert.deepEqual(run(idle(), { type: 'retry-due', at: NOW - 5, now: NOW }).actions, [{ type: 'set-timer', delayMs: 0 }]);
  });

  test('the timer claims, and asks for a sweep once its sweep time has come', () => {
    const armed = idle({ timerAt: NOW, sweepAt: NOW + 100 });
    const early = run(armed, { type: 'timer-fired', now: NOW });
    assert.deepEqual(early.actions, [{ type: 'claim' }]);
    assert.equal(early.state.timerAt, Infinity);
    assert.deepEqual(run(armed, { type: 'timer-fired', now: NOW + 100 }).actions, [{ type: 'sweep', soon: false }, { type: 'claim' }]);
  });
});

describe('worker scheduler: a round', () => {
  test('a claim that filled its slots, left work behind, or whose sweep goes on claims again', () => {
    for (const more of [{ filled: true }, { leftOver: true, took: true }, { sweeping: true }]) {
      const next = run(claiming(), claimed(more));
      assert.equal(next.state.phase, 'claiming', JSON.stringify(more));
      assert.deepEqual(next.actions, [{ type: 'claim' }], JSON.stringify(more));
    }
  });

  test('a round that took nothing ends, looking again at the safety poll (a sweep then)', () => {
    const ended = run(claiming(), claimed());
    assert.equal(ended.state.phase, 'idle');
    assert.deepEqual(ended.actions, [{ type: 'set-timer', delayMs: POLL }]);
    assert.equal(ended.state.sweepAt, NOW + POLL);
  });

  test('a round ends looking again at the first of its hints, due work no hint names, a sweep, left-over work', () => {
    const at = (event: SchedulerEvent) => run(claiming(), event).actions;
    assert.deepEqual(at(claimed({ look: { now: NOW, hintAt: NOW + 700, sweepAt: NOW + 900 } })), [{ type: 'set-timer', delayMs: 700 }]);
    assert.deepEqual(at(claimed({ look: { now: NOW, hintAt: Infinity, sweepAt: NOW + 900 } })), [{ type: 'set-timer', delayMs: 900 }]);
    // Left over, taking nothing (another worker's claim held it): a second later.
    assert.deepEqual(at(claimed({ leftOver: true })), [{ type: 'set-timer', delayMs: BLOCKED_RETRY_MS }]);
    // The database's next due time, sooner than any hint: then, with a sweep (no hint names it).
    const unknown = run(claiming(), claimed({ nextDueAt: NOW + 300, look: { now: NOW, hintAt: NOW + 500, sweepAt: Infinity } }));
    assert.deepEqual(unknown.actions, [{ type: 'set-timer', delayMs: 300 }]);
    assert.equal(unknown.state.sweepAt, NOW + 300);
    assert.deepEqual(run(unknown.state, { type: 'timer-fired', now: NOW + 300 }).actions, [
      { type: 'sweep', soon: false },
      { type: 'claim' },
    ]);
    // A due time a hint of this worker names already: no sweep for it.
    const known = run(claiming(), claimed({ nextDueAt: NOW + 500, look: { now: NOW, hintAt: NOW + 500, sweepAt: Infinity } }));
    assert.equal(known.state.sweepAt, NOW + POLL);
  });

  test('without a free slot the round ends and keeps what its claims found', () => {
    const first = run(claiming(), claimed({ leftOver: true, took: true }));
    assert.deepEqual(first.actions, [{ type: 'claim' }]);
    const full = run(first.state, { type: 'no-free-slots', look: nothingKnown });
    assert.equal(full.state.phase, 'idle');
    assert.deepEqual(full.actions, [{ type: 'set-timer', delayMs: BLOCKED_RETRY_MS }]);
  });

  test('a round forgets the last round’s left-overs and due time', () => {
    const ended = run(claiming(), claimed({ leftOver: true }));
    const next = run({ ...ended.state, timerAt: Infinity }, { type: 'wake' }, { type: 'no-free-slots', look: nothingKnown });
    assert.deepEqual(next.actions, [{ type: 'claim' }, { type: 'set-timer', delayMs: POLL }]);
  });
});

describe('worker scheduler: failures and stop', () => {
  test('a failed claim asks for a sweep and backs off, doubling up to the cap, until a round succeeds', () => {
    let state = claiming();
    const delays: number[] = [];
    for (let i = 0; i < 6; i++) {
      const failed = run({ ...state, timerAt: Infinity }, { type: 'claim-failed', now: NOW });
      assert.deepEqual(
        failed.actions.find((a) => a.type === 'sweep'),
        { type: 'sweep', soon: true },
      );
      assert.equal(failed.state.phase, 'idle');
      assert.equal(failed.state.filled, false);
      const timer = failed.actions.find((a) => a.type === 'set-timer');
      delays.push(timer?.type === 'set-timer' ? timer.delayMs : Number.NaN);
      state = { ...failed.state, phase: 'claiming' };
    }
    assert.deepEqual(delays, [ERROR_RETRY_MS, 2000, 4000, 8000, ERROR_RETRY_MAX_MS, ERROR_RETRY_MAX_MS]);
    assert.equal(run(state, claimed()).state.errorRetryMs, ERROR_RETRY_MS);
  });

  test('a wake-up during a failed claim claims again at once', () => {
    const next = run(claiming(), { type: 'wake' }, { type: 'claim-failed', now: NOW });
    assert.equal(next.state.phase, 'claiming');
    assert.deepEqual(next.actions.at(-1), { type: 'claim' });
  });

  test('after a stop nothing claims or sets the timer, and a claim on its way ends', () => {
    const stopped = run(claiming(), { type: 'stop' });
    assert.deepEqual(stopped.actions, [{ type: 'clear-timer' }]);
    const after = run(
      stopped.state,
      { type: 'wake' },
      { type: 'timer-fired', now: NOW },
      { type: 'retry-due', at: NOW + 5, now: NOW },
      { type: 'attempt-ended', dueHints: true },
      claimed({ filled: true }),
      { type: 'claim-failed', now: NOW },
    );
    assert.equal(after.state.phase, 'stopped');
    assert.deepEqual(after.actions, []);
  });
});

describe('worker scheduler: events while a claim is on its way', () => {
  test('no free slot after a wake-up came during the claim: the round ends and the next claim starts at once', () => {
    const woken = run(claiming(), { type: 'wake' });
    assert.equal(woken.state.phase, 'claiming-again');
    const full = run(woken.state, { type: 'no-free-slots', look: nothingKnown });
    assert.equal(full.state.phase, 'claiming');
    assert.deepEqual(full.actions, [{ type: 'set-timer', delayMs: POLL }, { type: 'claim' }]);
  });

  test('a NOTIFY during a claim claims again once it ends (a sweep asked at once when it names none); one naming only capped subscriptions does not', () => {
    const named = run(claiming(), { type: 'notified', listsNone: false, allAtCap: false });
    assert.deepEqual(named, { state: claiming({ phase: 'claiming-again' }), actions: [] });
    const none = run(claiming(), { type: 'notified', listsNone: true, allAtCap: false });
    assert.deepEqual(none, { state: claiming({ phase: 'claiming-again' }), actions: [{ type: 'sweep', soon: true }] });
    assert.deepEqual(run(claiming(), { type: 'notified', listsNone: false, allAtCap: true }), { state: claiming(), actions: [] });
    assert.deepEqual(run(named.state, claimed()).actions, [{ type: 'claim' }]);
  });

  test('an attempt turning slow during a claim claims again once it ends, only past the degraded share', () => {
    const freed = run(claiming(), { type: 'attempt-turned-slow', overShare: true, dueHints: false });
    assert.deepEqual(freed, { state: claiming({ phase: 'claiming-again' }), actions: [] });
    assert.deepEqual(run(freed.state, claimed()).actions, [{ type: 'claim' }]);
    const within = run(claiming(), { type: 'attempt-turned-slow', overShare: false, dueHints: true });
    assert.deepEqual(within, { state: claiming(), actions: [] });
  });
});
