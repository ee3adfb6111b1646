// A worker's running attempts, counted as they start and end: its free
// slots, the degraded share, and per subscription how many it runs against the
// cap they were claimed under. Nothing here is rescanned per question: the
// worker asks these on every NOTIFY, every claim and every attempt's end.
//
// Of `concurrency` slots, attempts to degraded endpoints hold at most
// `degradedShare`; an attempt still running after SLOW_ATTEMPT_MS counts as slow
// from then on. Attempts that turned slow while running stop counting once the
// share is full, so healthy endpoints always have concurrency - degradedShare
// slots at least (docs/delivery-engine.md, "Invariants").

/** A running attempt's lease, as handed back when the worker stops (hand-back.queries.ts). */
export interface RunningLease {
  id: string;
  leaseToken: string;
  subscriptionId: string;
  /** Its subscription's cap on attempts in flight when claimed. */
  cap: number;
  /** Holds a degraded slot. */
  degraded: boolean;
}

interface Running {
  lease: RunningLease;
  slowTimer?: NodeJS.Timeout;
}

/** One subscription's running attempts in this worker. */
interface SubscriptionCount {
  running: number;
  degraded: number;
  /** The caps they were claimed under (at most the cap's own size: a handful). */
  caps: number[];
}

export interface FreeSlots {
  /** Deliveries the next claim may lease. */
  limit: number;
  /** Of those, deliveries to degraded endpoints at most. */
  degradedLimit: number;
}

export interface InFlight {
  /** An attempt starts. */
  start(lease: RunningLease): void;
  /** It ended. */
  end(id: string): void;
  size(): number;
  free(): FreeSlots;
  /** This worker runs as many attempts of the subscription as its cap allowed when they were claimed. */
  atCap(subscriptionId: string): boolean;
  /** Subscriptions of the attempts holding degraded slots. */
  degradedSubscriptions(): string[];
  leases(): RunningLease[];
}

export interface InFlightOptions {
  concurrency: number;
  degradedShare: number;
  /** An attempt running this long turns slow. */
  slowAfterMs: number;
  /** One turned slow; `overShare`: the degraded share is now over full, so its fast slot counts as free. */
  turnedSlow(overShare: boolean): void;
}

/** The counts, changed only by startAttempt and endAttempt. */
interface Counts {
  options: InFlightOptions;
  running: Map<string, Running>;
  bySubscription: Map<string, SubscriptionCount>;
  degraded: number;
}

export function createInFlight(options: InFlightOptions): InFlight {
  const counts: Counts = { options, running: new Map(), bySubscription: new Map(), degraded: 0 };
  return {
    start: (lease) => startAttempt(counts, lease),
    end: (id) => endAttempt(counts, id),
    size: () => counts.running.size,
    free() {
      const fast = counts.running.size - counts.degraded;
      const limit = Math.max(0, options.concurrency - fast - Math.min(counts.degraded, options.degradedShare));
      return { limit, degradedLimit: Math.max(0, Math.min(options.degradedShare - counts.degraded, limit)) };
    },
    atCap(subscriptionId) {
      const count = counts.bySubscription.get(subscriptionId);
      return count !== undefined && count.running >= Math.min(...count.caps);
    },
    degradedSubscriptions() {
      const ids: string[] = [];
      for (const [id, count] of counts.bySubscription) if (count.degraded > 0) ids.push(id);
      return ids;
    },
    leases: () => [...counts.running.values()].map((entry) => entry.lease),
  };
}

function startAttempt(counts: Counts, lease: RunningLease): void {
  const entry: Running = { lease };
  counts.running.set(lease.id, entry);
  const count = counts.bySubscription.get(lease.subscriptionId) ?? { running: 0, degraded: 0, caps: [] };
  counts.bySubscription.set(lease.subscriptionId, count);
  count.running++;
  count.caps.push(lease.cap);
  if (lease.degraded) {
    counts.degraded++;
    count.degraded++;
    return;
  }
  // Still running after slowAfterMs: its slot counts as a degraded one from now on.
  entry.slowTimer = setTimeout(() => {
    lease.degraded = true;
    counts.degraded++;
    count.degraded++;
    counts.options.turnedSlow(counts.degraded > counts.options.degradedShare);
  }, counts.options.slowAfterMs);
  entry.slowTimer.unref();
}

function endAttempt(counts: Counts, id: string): void {
  const entry = counts.running.get(id);
  if (!entry) return;
  const { lease } = entry;
  clearTimeout(entry.slowTimer);
  counts.running.delete(id);
  const count = counts.bySubscription.get(lease.subscriptionId)!;
  count.running--;
  count.caps.splice(count.caps.indexOf(lease.cap), 1);
  if (lease.degraded) {
    counts.degraded--;
    count.degraded--;
  }
  if (count.running === 0) counts.bySubscription.delete(lease.subscriptionId);
}
