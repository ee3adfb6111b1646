// Which chart buckets (UTC days, hours) are sealed: ended more than a grace
// period ago, so their rows no longer change and a stored count stays true.
// Calls take created_at = the start of their transaction, and an attempt is
// logged with the time it was claimed, up to a lease (timeout + 5 s) later, or
// at the next claim after a worker died: 15 minutes covers both.
export const SEAL_GRACE_MS = 15 * 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

/** The start of the first bucket that is not sealed yet at `now`. */
export function sealedBoundary(now: Date, bucketMs: number, graceMs = SEAL_GRACE_MS): Date {
  return new Date(Math.floor((now.getTime() - graceMs) / bucketMs) * bucketMs);
}

/** Bucket starts in [from, to), `from` being a bucket start. */
export function bucketStarts(from: Date, to: Date, bucketMs: number): Date[] {
  const starts: Date[] = [];
  for (let t = from.getTime(); t < to.getTime(); t += bucketMs) starts.push(new Date(t));
  return starts;
}
