// A worker's running attempts, counted as they start and end: its free
// slots, the slow share, and per subscription how many it runs against the
// cap they were claimed under. Nothing here is rescanned per question: the
// worker asks these on every NOTIFY, every claim and every attempt's end.
//
// Of `concurrency` slots, attempts to degraded endpoints hold at most
// `slowShare`; an attempt still running after SLOW_ATTEMPT_MS counts as slow
// from then on. Attempts that turned slow while running stop counting once the
// share is full, so healthy endpoints always have concurrency - slowShare
// slots at least (docs/delivery-engine.md, "Invariants").

/** A running attempt's claim, as handed back when the worker stops (hand-back.queries.ts). */
export interface RunningClaim {
  id: string;
  leaseToken: string;
  subscriptionId: string;
  /** Its subscription's cap on attempts in flight when claimed. */
  cap: number;
  /** Holds a slow slot. */
  slow: boolean;
}

interface Running {
  claim: RunningClaim;
  slowTimer?: NodeJS.Timeout;
}

/** One subscription's running attempts in this worker. */
interface SubscriptionCount {
  running: number;
  slow: number;
  /** The caps they were claimed under (at most the cap's own size: a handful). */
  caps: number[];
}

export interface FreeSlots {
  /** Deliveries the next claim may lease. */
  limit: number;
  /** Of those, deliveries to degraded endpoints at most. */
  slowLimit: number;
}

export interface InFlight {
  /** An attempt starts. */
  start(claim: RunningClaim): void;
  /** It ended. */
  end(id: string): void;
  size(): number;
  free(): FreeSlots;
  /** This worker runs as many attempts of the subscription as its cap allowed when they were claimed. */
  atCap(subscriptionId: string): boolean;
  /** Subscriptions of the attempts holding slow slots. */
  slowSubscriptions(): string[];
  claims(): RunningClaim[];
}

export interface InFlightOptions {
  concurrency: number;
  slowShare: number;
  /** An attempt running this long turns slow. */
  slowAfterMs: number;
  /** One turned slow; `overShare`: the slow share is now over full, so its fast slot counts as free. */
  turnedSlow(overShare: boolean): void;
}

/** The counts, changed only by startAttempt and endAttempt. */
interface Counts {
  options: InFlightOptions;
  running: Map<string, Running>;
  bySubscription: Map<string, SubscriptionCount>;
  slow: number;
}

export function createInFlight(options: InFlightOptions): InFlight {
  const counts: Counts = { options, running: new Map(), bySubscription: new Map(), slow: 0 };
  return {
    start: (claim) => startAttempt(counts, claim),
    end: (id) => endAttempt(counts, id),
    size: () => counts.running.size,
    free() {
      const fast = counts.running.size - counts.slow;
      const limit = Math.max(0, options.concurrency - fast - Math.min(counts.slow, options.slowShare));
      return { limit, slowLimit: Math.max(0, Math.min(options.slowShare - counts.slow, limit)) };
    },
    atCap(subscriptionId) {
      const count = counts.bySubscription.get(subscriptionId);
      return count !== undefined && count.running >= Math.min(...count.caps);
    },
    slowSubscriptions() {
      const ids: string[] = [];
      for (const [id, count] of counts.bySubscription) if (count.slow > 0) ids.push(id);
      return ids;
    },
    claims: () => [...counts.running.values()].map((entry) => entry.claim),
  };
}

function startAttempt(counts: Counts, claim: RunningClaim): void {
  const entry: Running = { claim };
  counts.running.set(claim.id, entry);
  const count = counts.bySubscription.get(claim.subscriptionId) ?? { running: 0, slow: 0, caps: [] };
  counts.bySubscription.set(claim.subscriptionId, count);
  count.running++;
  count.caps.push(claim.cap);
  if (claim.slow) {
    counts.slow++;
    count.slow++;
    return;
  }
  // Still running after slowAfterMs: its slot counts as a slow one from now on.
  entry.slowTimer = setTimeout(() => {
    claim.slow = true;
    counts.slow++;
    count.slow++;
    counts.options.turnedSlow(counts.slow > counts.options.slowShare);
  }, counts.options.slowAfterMs);
  entry.slowTimer.unref();
}

function endAttempt(counts: Counts, id: string): void {
  const entry = counts.running.get(id);
  if (!entry) return;
  const { claim } = entry;
  clearTimeout(entry.slowTimer);
  counts.running.delete(id);
  const count = counts.bySubscription.get(claim.subscriptionId)!;
  count.running--;
  count.caps.splice(count.caps.indexOf(claim.cap), 1);
  if (claim.slow) {
    counts.slow--;
    count.slow--;
  }
  if (count.running === 0) counts.bySubscription.delete(claim.subscriptionId);
}
