export const RETRY_AFTER_CAP_MS = 60 * 60 * 1000;
export const RETRY_AFTER_FLOOR_MS = 1000;
export const JITTER = 0.1;
/** A subscription whose attempts have only failed for this long is disabled. */
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * 60 * 60 * 1000;
export function isSuccess(result) {
    return result.kind === 'response' && result.status >= 200 && result.status < 300;
}
/** `delayMs` moved by up to ±10 %, so retries of many deliveries failing together spread out. */
export function withJitter(delayMs, random) {
    return Math.max(0, Math.round(delayMs * (1 - JITTER + 2 * JITTER * random())));
}
/** Retry-After as delta-seconds or an HTTP-date (RFC 9110 §10.2.3), in milliseconds from now; undefined if unusable. */
export function parseRetryAfter(value, now) {
    if (value === undefined)
        return undefined;
    const text = value.trim();
    if (/^\d+$/.test(text))
        return Number(text) * 1000;
    if (!/[a-z]/i.test(text))
        return undefined;
    const at = Date.parse(text);
    if (Number.isNaN(at))
        return undefined;
    return Math.max(0, at - now.getTime());
}
export function decide(result, input) {
    if (isSuccess(result))
        return { outcome: 'succeeded' };
    if (result.kind === 'response' && result.status === 410)
        return { outcome: 'subscription_removed' };
    const retriesUsed = input.attemptInSchedule - 1;
    if (retriesUsed >= input.scheduleMs.length)
        return { outcome: 'failed' };
    if (result.kind === 'response' && (result.status === 429 || result.status === 503)) {
        const asked = parseRetryAfter(result.retryAfter, input.now);
        if (asked !== undefined) {
            return { outcome: 'retrying', delayMs: Math.min(RETRY_AFTER_CAP_MS, Math.max(RETRY_AFTER_FLOOR_MS, asked)) };
        }
    }
    return { outcome: 'retrying', delayMs: withJitter(input.scheduleMs[retriesUsed], input.random) };
}
/** The lease a worker takes on a delivery: the whole attempt plus room to record its outcome. */
export function leaseMsFor(webhookTimeoutMs) {
    return webhookTimeoutMs + Math.max(2000, Math.round(webhookTimeoutMs / 2));
}
//# sourceMappingURL=retry-policy.js.map