// WEBHOOK_RATE_LIMIT on /webhooks/subscribe and the webhook management routes
// (docs/interface.md §13): one budget per OAuth grant (a platform acting for
// one user) or per user (x-user-token). Without it, a connected platform could
// fill the audit log with subscribe and unsubscribe pairs. It runs after
// authentication, since the grant is known only then; an unauthenticated
// request never reaches it (401 first). With Redis the counter is shared by
// every instance, as RATE_LIMIT's is.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requirePrincipal } from '../auth/principal.ts';
import * as errors from '../errors.ts';

/** A refusal with its Retry-After (the problem plugin writes the header). */
class WebhookRateLimited extends errors.REQUEST_RATE_LIMITED {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super(retryAfterSeconds);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Whose budget a request draws on: the grant's for a platform, the user's otherwise. */
export function webhookRateLimitKey(request: FastifyRequest): string {
  const principal = requirePrincipal(request.principal);
  return principal.kind === 'oauth' && principal.grantId ? `webhooks:grant:${principal.grantId}` : `webhooks:user:${principal.userId}`;
}

/** The preHandler that follows a route's authentication hook. */
export function webhookRateLimit(app: FastifyInstance) {
  const check = app.createRateLimit({
    max: app.config.webhookRateLimit.max,
    timeWindow: app.config.webhookRateLimit.windowMs,
    keyGenerator: webhookRateLimitKey,
  });
  return async function limitWebhookCaller(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const limit = await check(request);
    if (limit.isAllowed) return;
    const seconds = Math.max(1, Math.ceil(limit.ttlInSeconds ?? limit.ttl / 1000));
    // The RateLimit-* headers RATE_LIMIT's routes send (IETF draft), so a client reads both limits alike.
    reply.header('ratelimit-limit', String(limit.max));
    reply.header('ratelimit-remaining', String(limit.remaining));
    reply.header('ratelimit-reset', String(seconds));
    if (limit.isExceeded) throw new WebhookRateLimited(seconds);
  };
}
