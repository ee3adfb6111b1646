// Recover (POST /webhooks/{id}/recover): every failed delivery of one
// subscription since a chosen time is sent again, as one action. Bounded twice:
// `since` lies within the delivery log's retention (older deliveries are gone
// anyway), and one call requeues at most RECOVER_BATCH deliveries, oldest first,
// answering `more: true` when the caller should call again. Idempotent for
// what is in flight: only deliveries still 'failed' are requeued.
import { actorOf } from '../audit/audit-actor.ts';
import { writeAuditEvent } from '../audit/audit-events.queries.ts';
import type { Principal } from '../auth/principal.ts';
import type { Pool } from '../db/pool.ts';
import { withOrg } from '../db/with-org.ts';
import * as errors from '../errors.ts';
import { ValidationProblem } from '../http/problem-details.plugin.ts';
import { notifyDeliveriesDue } from './deliveries-channel.queries.ts';
import { requeueFailedDeliveries } from './recover.queries.ts';
import { DELIVERY_LOG_RETENTION_MS } from './worker/retention.ts';
import { lockSubscription } from './subscriptions.queries.ts';
import { visibleSubscription } from './visible-subscription.ts';

export const RECOVER_BATCH = 1000;
/** The furthest back `since` may reach: the delivery log's retention. */
export const RECOVER_WINDOW_MS = DELIVERY_LOG_RETENTION_MS;
/** A `since` slightly ahead of the server's clock (a client's clock skew) is read as now. */
const CLOCK_SKEW_MS = 60_000;

export interface RecoverResult {
  subscription_id: string;
  since: string;
  requeued: number;
  more: boolean;
}

export type SinceProblem = 'invalid' | 'future' | 'old';

/** What is wrong with a `since`, if anything: the rules stated once, for the API and the page. */
export function recoverSinceProblem(since: Date, now = new Date()): SinceProblem | undefined {
  if (Number.isNaN(since.getTime())) return 'invalid';
  if (since.getTime() > now.getTime() + CLOCK_SKEW_MS) return 'future';
  if (since.getTime() < now.getTime() - RECOVER_WINDOW_MS) return 'old';
  return undefined;
}

const SINCE_MESSAGES: Record<SinceProblem, string> = {
  invalid: 'must be a date-time',
  future: 'must not be in the future',
  old: `must be within the last ${RECOVER_WINDOW_MS / 86_400_000} days (the delivery log's retention)`,
};

export function checkRecoverSince(since: Date, now = new Date()): void {
  const problem = recoverSinceProblem(since, now);
  if (problem) throw new ValidationProblem([{ field: 'since', message: SINCE_MESSAGES[problem] }]);
}

export async function recoverFailedDeliveries(
  pool: Pool,
  principal: Principal,
  subscriptionId: string,
  since: Date,
): Promise<RecoverResult> {
  checkRecoverSince(since);
  return withOrg(pool, principal.organizationId, async (db) => {
    // Locked until commit: a deletion or a grant's stop running beside this waits for it, or is waited for.
    const subscription = await visibleSubscription(db, principal, subscriptionId, lockSubscription);
    // Same rule as one redelivery: a disabled subscription sends nothing until re-enabled.
    if (subscription.status !== 'active') throw new errors.WEBHOOK_SUBSCRIPTION_DISABLED(subscriptionId);
    const { requeued, more } = await requeueFailedDeliveries(db, { subscriptionId, since, limit: RECOVER_BATCH });
    if (requeued > 0) {
      await writeAuditEvent(db, {
        organizationId: principal.organizationId,
        type: 'deliveries.recovered',
        actor: actorOf(principal),
        subjectType: 'subscription',
        subjectId: subscriptionId,
        details: { count: requeued, since: since.toISOString(), hook_url: subscription.callback_url },
      });
      await notifyDeliveriesDue(db);
    }
    return { subscription_id: subscriptionId, since: since.toISOString(), requeued, more };
  });
}
