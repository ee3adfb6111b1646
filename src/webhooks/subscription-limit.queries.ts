// The limit on an organization's active subscriptions (WEBHOOK_MAX_SUBSCRIPTIONS,
// subscriptions.service.ts): the lock that serialises adding one, and the
// counts read under it. Inside withOrg.
import type { Queryable } from '../db/pool.ts';
import { lockSql } from '../db/advisory-locks.ts';

/**
 * Serialises adding active subscriptions to the current organization
 * (subscribing a new URL or a disabled one, re-enabling): taken first in each
 * such transaction, so the next one, once it holds the lock, counts what the
 * previous one committed, and two requests for the last place cannot both
 * see room. Removing and disabling make room without it.
 */
export async function lockActiveSubscriptions(db: Queryable): Promise<void> {
  await db.query(`SELECT ${lockSql('active_subscriptions', 'app_current_org()')}`);
}

/** The current organization's active subscriptions (every client's). */
export async function countActiveSubscriptions(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM webhook_subscriptions WHERE organization_id = app_current_org() AND status = 'active'",
  );
  return rows[0]!.n;
}

/** Whether the client's subscription to this event and URL exists and is active (subscribing it again adds nothing). */
export async function isActiveSubscription(
  db: Queryable,
  input: { clientId: string; event: string; callbackUrl: string },
): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT 1 FROM webhook_subscriptions
      WHERE organization_id = app_current_org() AND client_id = $1 AND event = $2
        AND md5(callback_url) = md5($3) AND callback_url = $3 AND status = 'active'`,
    [input.clientId, input.event, input.callbackUrl],
  );
  return rows.length > 0;
}
