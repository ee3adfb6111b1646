// Brute-force brakes on signing in (POST /auth/sessions and the login page).
// Attempts are counted per email and per client address in PostgreSQL, so
// every instance shares them without Redis. Each attempt first reserves its
// place atomically (one upsert returning the new count) and is refused over
// the limit before its password is checked, right or wrong; so however many
// guesses arrive at once, at most `max` per window are verified (counting
// after verifying would let every concurrent guess through).
// Only failures keep their place: a success gives the address's back and
// clears the email's count, so a user or an integration that signs in often
// is never locked out.
import { createHash } from 'node:crypto';
import * as errors from '../errors.ts';
import type { Queryable } from '../db/pool.ts';
import { clearFailures, releaseAttempt, reserveAttempt, type ThrottleRule } from './login-throttle.queries.ts';

export const LOGIN_FAILURES_PER_EMAIL = { max: 10, windowSeconds: 15 * 60 };
export const LOGIN_FAILURES_PER_IP = { max: 30, windowSeconds: 60 };

/** A 429 that carries its Retry-After (the problem handler sends the header). */
export class LoginThrottled extends errors.REQUEST_RATE_LIMITED {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super(retryAfterSeconds);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

function emailSubject(email: string): string {
  // Hashed: the table needs a key, not a second copy of every address typed at the login form.
  return `email:${createHash('sha256').update(email.trim().toLowerCase()).digest('hex')}`;
}

function rules(email: string, ip: string): ThrottleRule[] {
  return [
    { subject: emailSubject(email), ...LOGIN_FAILURES_PER_EMAIL },
    { subject: `ip:${ip}`, ...LOGIN_FAILURES_PER_IP },
  ];
}

/**
 * Runs `attempt` (which throws AUTH_INVALID_CREDENTIALS on bad credentials)
 * once both the email and the address have a free place in their window;
 * otherwise 429 with the seconds until the longest block ends.
 */
export async function throttledLogin<T>(db: Queryable, email: string, ip: string, attempt: () => Promise<T>): Promise<T> {
  const subjects = rules(email, ip);
  const reservations = await reserveAttempt(db, subjects);
  const limits = new Map(subjects.map((rule) => [rule.subject, rule.max]));
  const over = reservations.filter((r) => r.attempts > limits.get(r.subject)!);
  if (over.length > 0) {
    // The subjects still under their limit did not get to try: their places go back.
    await releaseAttempt(
      db,
      reservations.filter((r) => !over.includes(r)).map((r) => r.subject),
    );
    throw new LoginThrottled(Math.max(...over.map((r) => r.seconds_left)));
  }
  const [emailRule, ipRule] = subjects as [ThrottleRule, ThrottleRule];
  let result: T;
  try {
    result = await attempt();
  } catch (error) {
    // A wrong password keeps its places; anything else (a fault of ours) gives them back.
    if (!(error instanceof errors.AUTH_INVALID_CREDENTIALS)) await releaseAttempt(db, [emailRule.subject, ipRule.subject]).catch(() => {});
    throw error;
  }
  await clearFailures(db, emailRule.subject);
  await releaseAttempt(db, [ipRule.subject]);
  return result;
}
