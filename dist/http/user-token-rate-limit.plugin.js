import fp from 'fastify-plugin';
import { hashToken } from '../auth/tokens.js';
/** Requests without a token are counted per client address instead. */
export function userTokenRateLimitKey(request) {
    const token = request.headers['x-user-token'];
    if (typeof token === 'string' && token.length > 0)
        return `user-token:${hashToken(token).toString('base64url')}`;
    return `ip:${request.ip}`;
}
async function userTokenRateLimit(app) {
    const hook = app.rateLimit({
        max: app.config.rateLimit.max,
        timeWindow: app.config.rateLimit.windowMs,
        keyGenerator: userTokenRateLimitKey,
    });
    app.decorate('userTokenRateLimit', hook);
}
export default fp(userTokenRateLimit, { name: 'user-token-rate-limit', dependencies: ['@fastify/rate-limit'] });
//# sourceMappingURL=user-token-rate-limit.plugin.js.map