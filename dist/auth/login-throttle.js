// Brute-force brakes on signing in (POST /auth/sessions and the login page).
// Failed attempts are counted per email and per client address in PostgreSQL,
// so every instance shares them without Redis. Only failures count: a user or
// an integration that signs in often is never locked out, while a subject over
// its limit is refused before its password is checked, right or wrong.
import { createHash } from 'node:crypto';
import * as errors from '../errors.js';
import { clearFailures, countFailure, secondsBlocked } from './login-throttle.queries.js';
export const LOGIN_FAILURES_PER_EMAIL = { max: 10, windowSeconds: 15 * 60 };
export const LOGIN_FAILURES_PER_IP = { max: 30, windowSeconds: 60 };
/** A 429 that carries its Retry-After (the problem handler sends the header). */
export class LoginThrottled extends errors.REQUEST_RATE_LIMITED {
    retryAfterSeconds;
    constructor(retryAfterSeconds) {
        super(retryAfterSeconds);
        this.retryAfterSeconds = retryAfterSeconds;
    }
}
function emailSubject(email) {
    // Hashed: the table needs a key, not a second copy of every address typed at the login form.
    return `email:${createHash('sha256').update(email.trim().toLowerCase()).digest('hex')}`;
}
function rules(email, ip) {
    return [
        { subject: emailSubject(email), ...LOGIN_FAILURES_PER_EMAIL },
        { subject: `ip:${ip}`, ...LOGIN_FAILURES_PER_IP },
    ];
}
/**
 * Runs `attempt` (which throws on bad credentials) unless the email or the
 * address is blocked; counts its failure, or clears the email's count on success.
 */
export async function throttledLogin(db, email, ip, attempt) {
    const subjects = rules(email, ip);
    const wait = await secondsBlocked(db, subjects);
    if (wait > 0)
        throw new LoginThrottled(wait);
    try {
        const result = await attempt();
        await clearFailures(db, subjects[0].subject);
        return result;
    }
    catch (error) {
        if (error instanceof errors.AUTH_INVALID_CREDENTIALS)
            await countFailure(db, subjects);
        throw error;
    }
}
//# sourceMappingURL=login-throttle.js.map