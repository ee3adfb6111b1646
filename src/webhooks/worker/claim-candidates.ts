// Where a worker's next claim looks for due work. A claim examines a few
// dozen subscriptions, never every one (there may be tens of thousands):
//
//   hints  subscriptions this worker knows have work due (now or at a given
//          time): listed by the NOTIFY of a completed call, retried by one of
//          its own attempts, left over by a claim that could not take them
//          all, or whose attempt ended while more of its work waited;
//   walk   the next WALK subscriptions with pending deliveries in id order,
//          from where the last claim's walk stopped (a cursor), so every
//          subscription gets looked at in turn whatever the hints say.
//
// A sweep walks on to the last subscription without waiting for the next
// wake-up. It finds what no hint names: work made due by another worker (a
// retry it scheduled before it died, a lease that ran out), an open circuit
// whose wait ended, a delivery requeued through the API or a subscription
// enabled again (their NOTIFY names no subscription). Sweeps are asked for at
// start, by such a NOTIFY, when the database says something is due, and by
// the safety poll; at most one a SWEEP_INTERVAL_MS, or a NOTIFY_SWEEP_INTERVAL_MS
// when a NOTIFY asks (an organization with more subscriptions than a NOTIFY
// names asks on every call it completes: one sweep serves many of its calls).

/** Subscriptions with pending deliveries one claim's walk visits. */
export const WALK = 100;
/** Hints passed to one claim, at most. */
const MAX_HINTS = 100;
/** Sweeps asked for by the database's next due time start at most this often. */
export const SWEEP_INTERVAL_MS = 1000;
/** Sweeps asked for by a NOTIFY start at most this often. */
export const NOTIFY_SWEEP_INTERVAL_MS = 250;

export interface CandidateTracker {
  /** `id` has work due at `at` (ms since the epoch; default now). */
  hint(id: string, at?: number): void;
  /**
   * `id` has fresh work, listed by a NOTIFY: looked at before the other hints,
   * so that one organization's left-overs (hundreds of subscriptions whose
   * endpoints take nothing) never keep another's fresh delivery out of a claim.
   */
  notified(id: string): void;
  /** The earliest hint not due yet (ms), or Infinity. */
  nextHintAt(): number;
  hasDueHints(): boolean;
  /** The hints and the walk for the next claim. */
  next(): { hints: string[]; cursor: string | null; walk: number };
  /** What the claim found: where its walk stopped, and what it left. Returns whether a sweep goes on. */
  claimed(result: { passed: string[]; cursor: string | null; leftOver: string[] }): boolean;
  /** Ask for a sweep; `now`: after the shorter interval (a NOTIFY that names no subscription). */
  sweep(now?: boolean): void;
  /** When a sweep asked for may start (ms), or Infinity when none waits. */
  sweepAt(): number;
}

export function createClaimCandidates(clock: () => number = Date.now): CandidateTracker {
  const fresh = new Set<string>();
  const hints = new Map<string, number>();
  let cursor: string | null = null;
  let sweeping = false;
  let sweepWanted = true;
  let sweepNow = true;
  let lastSweepAt = -Infinity;
  const sweepAt = () => (!sweepWanted ? Infinity : lastSweepAt + (sweepNow ? NOTIFY_SWEEP_INTERVAL_MS : SWEEP_INTERVAL_MS));

  return {
    hint(id, at = clock()) {
      const known = hints.get(id);
      if (known === undefined || at < known) hints.set(id, at);
    },
    notified(id) {
      fresh.add(id);
    },
    nextHintAt: () => earliestAfter(hints, clock()),
    hasDueHints: () => fresh.size > 0 || anyDue(hints, clock()),
    next() {
      if (!sweeping && sweepAt() <= clock()) {
        // A sweep starts from the first subscription and ends at the last.
        sweepWanted = false;
        sweepNow = false;
        sweeping = true;
        lastSweepAt = clock();
        cursor = null;
      }
      return { hints: dueHints(fresh, hints, clock()), cursor, walk: WALK };
    },
    claimed({ passed, cursor: stoppedAt, leftOver }) {
      for (const id of passed) {
        hints.delete(id);
        fresh.delete(id);
      }
      for (const id of leftOver) this.hint(id);
      cursor = stoppedAt;
      if (stoppedAt === null) sweeping = false;
      return sweeping;
    },
    sweep(now = false) {
      sweepWanted = true;
      if (now) sweepNow = true;
    },
    sweepAt,
  };
}

/** The hints for a claim: the fresh ones (listed by a NOTIFY) first, then those due by `now`; MAX_HINTS at most. */
function dueHints(fresh: Set<string>, hints: Map<string, number>, now: number): string[] {
  const ids: string[] = [];
  for (const id of fresh) {
    ids.push(id);
    if (ids.length === MAX_HINTS) return ids;
  }
  for (const [id, at] of hints) {
    if (fresh.has(id)) continue;
    if (at > now) continue;
    ids.push(id);
    if (ids.length === MAX_HINTS) break;
  }
  return ids;
}

/** The earliest hint not due by `now`, or Infinity. */
function earliestAfter(hints: Map<string, number>, now: number): number {
  let next = Infinity;
  for (const at of hints.values()) if (at > now && at < next) next = at;
  return next;
}

function anyDue(hints: Map<string, number>, now: number): boolean {
  for (const at of hints.values()) if (at <= now) return true;
  return false;
}
