// call.completed subscriptions (docs/interface.md §4.2, §4.3, §13). The platform
// subscribes and unsubscribes by URL for its own client; an organization user
// (x-user-token) sees and manages every subscription of the organization, an
// OAuth caller only its own client's.
import type { Principal } from '../auth/principal.ts';
import { CALL_COMPLETED } from '../calls/call-event.ts';
import type { Pool } from '../db/pool.ts';
import { withOrg } from '../db/with-org.ts';
import * as errors from '../errors.ts';
import { ValidationProblem } from '../http/problem-details.plugin.ts';
import { notifyDeliveriesDue } from './deliveries.queries.ts';
import { MAX_IN_FLIGHT_PER_SUBSCRIPTION } from './worker/endpoint-health.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import { checkHookUrl, checkUrlShape, type CheckHookUrlOptions, type HookUrlCheck } from './ssrf/check-hook-url.ts';
import {
  deleteSubscription,
  deleteSubscriptionsByUrl,
  enableSubscription,
  findSubscription,
  listSubscriptions,
  upsertSubscription,
  type CircuitShown,
  type DisabledReason,
  type Subscription,
  type SubscriptionStatus,
} from './subscriptions.queries.ts';

export interface SubscriptionSummary {
  id: string;
  event: string;
  callback_url: string;
}

/** The endpoint's health as the delivery workers see it (webhooks.schemas.ts, CircuitSchema, says what each means). */
export interface CircuitView {
  state: CircuitShown;
  since: string | null;
  next_probe_at: string | null;
  consecutive_failures: number;
  concurrency_limit: number;
}

export interface SubscriptionView extends SubscriptionSummary {
  client_id: string;
  status: SubscriptionStatus;
  has_secret: boolean;
  failing_since: string | null;
  disabled_at: string | null;
  disabled_reason: DisabledReason | null;
  created_at: string;
  updated_at: string;
  circuit: CircuitView;
}

export interface SubscribeDeps {
  pool: Pool;
  secretBox: SecretBox;
  urlCheck: CheckHookUrlOptions;
}

export function subscriptionView(row: Subscription): SubscriptionView {
  return {
    id: row.id,
    event: row.event,
    callback_url: row.callback_url,
    client_id: row.client_id,
    status: row.status,
    has_secret: row.has_secret,
    failing_since: row.failing_since?.toISOString() ?? null,
    disabled_at: row.disabled_at?.toISOString() ?? null,
    disabled_reason: row.disabled_reason,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    circuit: {
      state: row.circuit_shown,
      since: row.circuit_changed_at?.toISOString() ?? null,
      next_probe_at: row.circuit_shown === 'closed' ? null : (row.circuit_retry_at?.toISOString() ?? null),
      consecutive_failures: row.consecutive_failures,
      concurrency_limit: row.concurrency_limit ?? MAX_IN_FLIGHT_PER_SUBSCRIPTION,
    },
  };
}

/** The OAuth client a platform call acts for; subscribe/unsubscribe exist only for platforms. */
function platformClient(principal: Principal): string {
  if (principal.kind !== 'oauth' || !principal.clientId) throw new Error('platform route reached without the platform guard');
  return principal.clientId;
}

/** The grant the platform's access token belongs to: the subscription lives and ends with it. */
function platformGrant(principal: Principal): string {
  if (principal.kind !== 'oauth' || !principal.grantId) throw new Error('platform route reached without the platform guard');
  return principal.grantId;
}

/** Which client's subscriptions the caller may see: all of the organization's for a user. */
function visibleClient(principal: Principal): string | undefined {
  return principal.kind === 'oauth' ? principal.clientId : undefined;
}

function hookUrlProblem(check: HookUrlCheck): void {
  if (check.ok) return;
  const fieldErrors = [{ field: 'hookUrl', message: check.reason.replace(/^hookUrl /, '') }];
  throw new ValidationProblem(fieldErrors, check.rule === 'port' ? new errors.WEBHOOK_PORT_NOT_ALLOWED().code : undefined);
}

export async function subscribe(
  deps: SubscribeDeps,
  principal: Principal,
  input: { hookUrl: string; event?: string; secret?: string },
): Promise<{ subscription: SubscriptionSummary; created: boolean }> {
  const clientId = platformClient(principal);
  const grantId = platformGrant(principal);
  hookUrlProblem(await checkHookUrl(input.hookUrl, deps.urlCheck));
  const event = input.event ?? CALL_COMPLETED;
  const secretCiphertext = input.secret === undefined ? null : deps.secretBox.seal(input.secret, principal.organizationId);
  const row = await withOrg(deps.pool, principal.organizationId, (db) =>
    upsertSubscription(db, { clientId, grantId, event, callbackUrl: input.hookUrl, secretCiphertext }),
  );
  return { subscription: { id: row.id, event: row.event, callback_url: row.callback_url }, created: row.inserted };
}

/**
 * Removes the client's subscriptions with exactly this URL; none left is
 * success too. Only the URL's form is checked, not where its host points
 * now, so a hook whose name later resolves privately can still be removed.
 */
export async function unsubscribe(pool: Pool, principal: Principal, hookUrl: string): Promise<number> {
  const clientId = platformClient(principal);
  hookUrlProblem(checkUrlShape(hookUrl));
  return withOrg(pool, principal.organizationId, (db) => deleteSubscriptionsByUrl(db, { clientId, callbackUrl: hookUrl }));
}

export async function listVisibleSubscriptions(pool: Pool, principal: Principal): Promise<SubscriptionView[]> {
  const rows = await withOrg(pool, principal.organizationId, (db) => listSubscriptions(db, visibleClient(principal)));
  return rows.map(subscriptionView);
}

/** The subscription when the caller may see it; otherwise 404 (another organization's or client's id included). */
export async function getVisibleSubscription(pool: Pool, principal: Principal, id: string): Promise<SubscriptionView> {
  const row = await withOrg(pool, principal.organizationId, (db) => findSubscription(db, { id, clientId: visibleClient(principal) }));
  if (!row) throw new errors.WEBHOOK_SUBSCRIPTION_NOT_FOUND(id);
  return subscriptionView(row);
}

export async function removeSubscription(pool: Pool, principal: Principal, id: string): Promise<void> {
  const removed = await withOrg(pool, principal.organizationId, (db) => deleteSubscription(db, { id, clientId: visibleClient(principal) }));
  if (!removed) throw new errors.WEBHOOK_SUBSCRIPTION_NOT_FOUND(id);
}

/**
 * Re-enables a disabled subscription; its paused deliveries resume at once.
 * Refused once the grant it was made under has ended: the platform must be
 * connected again and subscribe anew.
 */
export async function reenableSubscription(pool: Pool, principal: Principal, id: string): Promise<SubscriptionView> {
  const row = await withOrg(pool, principal.organizationId, async (db) => {
    const clientId = visibleClient(principal);
    const enabled = await enableSubscription(db, { id, clientId });
    if (enabled) {
      await notifyDeliveriesDue(db);
      return enabled;
    }
    if (await findSubscription(db, { id, clientId })) throw new errors.WEBHOOK_SUBSCRIPTION_GRANT_ENDED(id);
    return undefined;
  });
  if (!row) throw new errors.WEBHOOK_SUBSCRIPTION_NOT_FOUND(id);
  return subscriptionView(row);
}
