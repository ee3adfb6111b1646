// Which subscriptions a caller may see: all of its organization's for a user
// (row-level security keeps to the organization), only its own client's for a
// platform. One it may not see is answered as missing (404), another
// organization's or another client's alike.
import type { Principal } from '../auth/principal.ts';
import type { Queryable } from '../db/pool.ts';
import * as errors from '../errors.ts';
import { findSubscription, type Subscription } from './subscriptions.queries.ts';

/** The client whose subscriptions, deliveries and attempts the caller may see; undefined: any of the organization's. */
export function visibleClient(principal: Principal): string | undefined {
  return principal.kind === 'oauth' ? principal.clientId : undefined;
}

type SubscriptionRead = (db: Queryable, input: { id: string; clientId: string | undefined }) => Promise<Subscription | undefined>;

/**
 * The subscription, read in `db` (a withOrg transaction) by `read`
 * (findSubscription, or lockSubscription to hold it), when the caller may see
 * it; otherwise WEBHOOK_SUBSCRIPTION_NOT_FOUND.
 */
export async function visibleSubscription(
  db: Queryable,
  principal: Principal,
  id: string,
  read: SubscriptionRead = findSubscription,
): Promise<Subscription> {
  const subscription = await read(db, { id, clientId: visibleClient(principal) });
  if (!subscription) throw new errors.WEBHOOK_SUBSCRIPTION_NOT_FOUND(id);
  return subscription;
}
