// call.completed subscriptions (docs/interface.md §4.2, §4.3, §13). The platform
// subscribes and unsubscribes by URL for its own client; an organization user
// (x-user-token) sees and manages every subscription of the organization, an
// OAuth caller only its own client's. An organization has at most
// WEBHOOK_MAX_SUBSCRIPTIONS active subscriptions, every client's together: one
// leaked access token cannot make each call fan out without bound.
import { createHash, timingSafeEqual } from 'node:crypto';
import { actorOf } from '../audit/audit-actor.ts';
import { actAs } from '../audit/audit-events.queries.ts';
import type { Principal } from '../auth/principal.ts';
import { CALL_COMPLETED } from './event-types.ts';
import type { Pool, Queryable } from '../db/pool.ts';
import { findReferences, type CallFiltersObject } from '../calls/calls.queries.ts';
import { withOrg } from '../db/with-org.ts';
import * as errors from '../errors.ts';
import { ValidationProblem } from '../http/problem-details.plugin.ts';
import { notifyDeliveriesDue } from './deliveries-channel.queries.ts';
import { MAX_IN_FLIGHT_PER_SUBSCRIPTION } from './worker/endpoint-health.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import { checkSecret, type SecretFormat } from './signing-secret.ts';
import { checkHookUrl, checkUrlShape, type CheckHookUrlOptions, type HookUrlCheck } from '../ssrf/check-hook-url.ts';
import { countActiveSubscriptions, isActiveSubscription, lockActiveSubscriptions } from './subscription-limit.queries.ts';
import { deleteSubscription, deleteSubscriptionsByUrl } from './subscription-removal.queries.ts';
import {
  enableSubscription,
  findSubscription,
  listSubscriptions,
  lockSubscriptionSecret,
  recordSecretChanged,
  upsertSubscription,
  type CircuitShown,
  type DisabledReason,
  type Subscription,
  type SubscriptionStatus,
} from './subscriptions.queries.ts';
import { visibleClient, visibleSubscription } from './visible-subscription.ts';

export interface SubscriptionSummary {
  id: string;
  event: string;
  callback_url: string;
  filters: CallFiltersObject;
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
  secret_format: SecretFormat | null;
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
  /** WEBHOOK_MAX_SUBSCRIPTIONS. */
  maxSubscriptions: number;
}

/** How much of its limit an organization uses: its active subscriptions, every client's. */
export interface SubscriptionUsage {
  active: number;
  limit: number;
}

export function subscriptionView(row: Subscription): SubscriptionView {
  return {
    id: row.id,
    event: row.event,
    callback_url: row.callback_url,
    filters: row.filters,
    client_id: row.client_id,
    status: row.status,
    has_secret: row.has_secret,
    secret_format: row.secret_format,
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

function hookUrlProblem(check: HookUrlCheck): void {
  if (check.ok) return;
  const fieldErrors = [{ field: 'hookUrl', message: check.reason.replace(/^hookUrl /, '') }];
  throw new ValidationProblem(fieldErrors, check.rule === 'port' ? new errors.WEBHOOK_PORT_NOT_ALLOWED().code : undefined);
}

/**
 * Whether the stored secret is the one given again (compared in constant time).
 * One that no longer opens (its key removed) counts as changed.
 */
function sameSecret(box: SecretBox, organizationId: string, sealed: Buffer | null, given: string): boolean {
  if (sealed === null) return false;
  let current: string;
  try {
    current = box.open(sealed, organizationId);
  } catch {
    return false;
  }
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(current), digest(given));
}

/** The rule a secret given now follows (signing-secret.ts); a `whsec_` secret that is not one is a 400 naming `secret`. */
function secretFormat(secret: string): SecretFormat {
  const check = checkSecret(secret);
  if (!check.ok) throw new ValidationProblem([{ field: 'secret', message: check.message }]);
  return check.format;
}

/** A filter's location and agent must be the organization's (read under its row-level security): else a 400 naming the filter. */
async function checkFilterReferences(db: Queryable, filters: CallFiltersObject | undefined): Promise<void> {
  if (filters?.location_id === undefined && filters?.agent_id === undefined) return;
  const found = await findReferences(db, { locationId: filters.location_id, agentId: filters.agent_id });
  const problems = [];
  if (filters.location_id !== undefined && !found.location) {
    problems.push({ field: 'filters.location_id', message: 'is not a location of this organization' });
  }
  if (filters.agent_id !== undefined && !found.agent)
    problems.push({ field: 'filters.agent_id', message: 'is not an agent of this organization' });
  if (problems.length) throw new ValidationProblem(problems);
}

export async function subscribe(
  deps: SubscribeDeps,
  principal: Principal,
  input: { hookUrl: string; event?: string; secret?: string; filters?: CallFiltersObject },
): Promise<{ subscription: SubscriptionSummary; created: boolean }> {
  const clientId = platformClient(principal);
  const grantId = platformGrant(principal);
  // Checked before the hook URL, whose check may wait for DNS.
  const format = input.secret === undefined ? null : secretFormat(input.secret);
  hookUrlProblem(await checkHookUrl(input.hookUrl, deps.urlCheck));
  const event = input.event ?? CALL_COMPLETED;
  const secret =
    input.secret === undefined || format === null
      ? null
      : { ciphertext: deps.secretBox.seal(input.secret, principal.organizationId), format };
  const hook = { clientId, event, callbackUrl: input.hookUrl };
  const row = await withOrg(deps.pool, principal.organizationId, async (db) => {
    // The created or enabled subscription's events (its triggers) name the client.
    await actAs(db, actorOf(principal));
    // Waits for the organization's other subscribes and re-enables, so it counts what they committed.
    await lockActiveSubscriptions(db);
    // A URL subscribed and active already adds nothing: answered as always, even at the limit.
    if (!(await isActiveSubscription(db, hook)) && (await countActiveSubscriptions(db)) >= deps.maxSubscriptions) {
      throw new errors.WEBHOOK_SUBSCRIPTION_LIMIT(deps.maxSubscriptions);
    }
    const stored = input.secret === undefined ? undefined : await lockSubscriptionSecret(db, hook);
    await checkFilterReferences(db, input.filters);
    const upserted = await upsertSubscription(db, { ...hook, grantId, secret, filters: input.filters });
    if (stored && input.secret !== undefined && !sameSecret(deps.secretBox, principal.organizationId, stored.sealed, input.secret)) {
      await recordSecretChanged(db, { id: upserted.id, actor: actorOf(principal) });
    }
    return upserted;
  });
  return {
    subscription: { id: row.id, event: row.event, callback_url: row.callback_url, filters: row.filters },
    created: row.inserted,
  };
}

/**
 * Removes the client's subscriptions with exactly this URL; none left is
 * success too. Only the URL's form is checked, not where its host points
 * now, so a hook whose name later resolves privately can still be removed.
 */
export async function unsubscribe(pool: Pool, principal: Principal, hookUrl: string): Promise<number> {
  const clientId = platformClient(principal);
  hookUrlProblem(checkUrlShape(hookUrl));
  return withOrg(pool, principal.organizationId, (db) =>
    deleteSubscriptionsByUrl(db, { clientId, callbackUrl: hookUrl, actor: actorOf(principal) }),
  );
}

export async function listVisibleSubscriptions(pool: Pool, principal: Principal): Promise<SubscriptionView[]> {
  const rows = await withOrg(pool, principal.organizationId, (db) => listSubscriptions(db, visibleClient(principal)));
  return rows.map(subscriptionView);
}

/** The organization's use of its limit: every client's active subscriptions, whichever the caller may see. */
export async function subscriptionUsage(pool: Pool, organizationId: string, limit: number): Promise<SubscriptionUsage> {
  return { active: await withOrg(pool, organizationId, countActiveSubscriptions), limit };
}

/** The subscription when the caller may see it; otherwise 404 (another organization's or client's id included). */
export async function getVisibleSubscription(pool: Pool, principal: Principal, id: string): Promise<SubscriptionView> {
  return subscriptionView(await withOrg(pool, principal.organizationId, (db) => visibleSubscription(db, principal, id)));
}

export async function removeSubscription(pool: Pool, principal: Principal, id: string): Promise<void> {
  const removed = await withOrg(pool, principal.organizationId, (db) =>
    deleteSubscription(db, { id, clientId: visibleClient(principal), actor: actorOf(principal) }),
  );
  if (!removed) throw new errors.WEBHOOK_SUBSCRIPTION_NOT_FOUND(id);
}

/**
 * Re-enables a disabled subscription; its paused deliveries resume at once.
 * Refused once the grant it was made under has ended: the platform must be
 * connected again and subscribe anew; when its URL was disabled as invalid
 * (it can only be deleted); and when the organization's active
 * subscriptions are at `limit`.
 */
export async function reenableSubscription(pool: Pool, principal: Principal, id: string, limit: number): Promise<SubscriptionView> {
  const row = await withOrg(pool, principal.organizationId, async (db) => {
    const clientId = visibleClient(principal);
    // The enabled subscription's events (its trigger: subscription.enabled, circuit.closed reset) name the caller.
    await actAs(db, actorOf(principal));
    await lockActiveSubscriptions(db);
    const wasDisabled = (await findSubscription(db, { id, clientId }))?.status === 'disabled';
    const enabled = await enableSubscription(db, { id, clientId });
    if (enabled) {
      // Counted after the change, which the throw rolls back, so that an ended grant is the reason given first.
      if (wasDisabled && (await countActiveSubscriptions(db)) > limit) throw new errors.WEBHOOK_SUBSCRIPTION_LIMIT(limit);
      await notifyDeliveriesDue(db);
      return enabled;
    }
    const found = await findSubscription(db, { id, clientId });
    if (found?.disabled_reason === 'invalid_url') throw new errors.WEBHOOK_SUBSCRIPTION_URL_INVALID(id);
    if (found) throw new errors.WEBHOOK_SUBSCRIPTION_GRANT_ENDED(id);
    return undefined;
  });
  if (!row) throw new errors.WEBHOOK_SUBSCRIPTION_NOT_FOUND(id);
  return subscriptionView(row);
}
