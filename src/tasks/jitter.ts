// Spreading repeated work out in time, so that many processes (or many
// retries failing together) do not all come back at the same moment.

/** `value` moved by up to ±`fraction` (default ±10 %); `random` is Math.random in production, fixed in tests. */
export function jitter(value: number, random: () => number = Math.random, fraction = 0.1): number {
  return value * (1 - fraction + 2 * fraction * random());
}
