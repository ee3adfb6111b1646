// call.completed subscriptions of the current organization (inside withOrg;
// only countCircuitStates, for /metrics, reads every organization's as owner):
// the row, subscribing, reading and re-enabling. The limit on active
// subscriptions is subscription-limit.queries.ts; removal,
// subscription-removal.queries.ts.
// `clientId` narrows a query to one OAuth client's subscriptions; undefined
// means every subscription of the organization (an x-user-token caller).
import type { Queryable } from '../db/pool.ts';
import { waitClaimLock } from './claim-lock.ts';
import type { SecretFormat } from './signing-secret.ts';
import type { CallFiltersObject } from '../calls/calls.queries.ts';
import type { AuditActor } from '../audit/audit-actor.ts';
import { actorArguments, actorValues } from '../audit/audit-events.queries.ts';

export type SubscriptionStatus = 'active' | 'disabled';
/**
 * Why a subscription is disabled (webhook_subscriptions_disabled_reason_check): its deliveries failed for five days,
 * its grant stopped standing, or its URL holds a character no URL may hold now (migration 0041).
 */
export type DisabledReason =
  | 'delivery_failures'
  | 'grant_revoked'
  | 'user_deactivated'
  | 'organization_deactivated'
  | 'membership_removed'
  | 'invalid_url';
/** The circuit as shown (app_circuit_shown): 'probing' is an open circuit whose wait is over. */
export type CircuitShown = 'closed' | 'open' | 'probing';

export interface Subscription {
  id: string;
  organization_id: string;
  client_id: string;
  event: string;
  callback_url: string;
  has_secret: boolean;
  /** The rule that keys webhook-signature; null without a secret. */
  secret_format: SecretFormat | null;
  status: SubscriptionStatus;
  failing_since: Date | null;
  disabled_at: Date | null;
  disabled_reason: DisabledReason | null;
  created_at: Date;
  updated_at: Date;
  circuit_shown: CircuitShown;
  circuit_changed_at: Date | null;
  /** NULL while closed. */
  circuit_retry_at: Date | null;
  consecutive_failures: number;
  /** NULL: no limit of its own (the worker's cap). */
  concurrency_limit: number | null;
  /** Which calls it is sent (app_filters_match); {} for every call. */
  filters: CallFiltersObject;
}

const COLUMNS = `id, organization_id, client_id, event, callback_url, secret_ciphertext IS NOT NULL AS has_secret,
  CASE WHEN secret_ciphertext IS NOT NULL THEN secret_format END AS secret_format, status, failing_since, disabled_at,
  CASE WHEN status = 'disabled' THEN coalesce(disabled_reason, 'delivery_failures') END AS disabled_reason, created_at, updated_at,
  app_circuit_shown(circuit_state, circuit_retry_at) AS circuit_shown, circuit_changed_at, circuit_retry_at,
  consecutive_failures, concurrency_limit, filters`;

// A fresh start for the endpoint's health (the columns app_endpoint_health_after moves) when the subscription
// is asked for again: the circuit closed, the failure run forgotten, and one
// attempt at a time until healthy answers raise the limit again. `when` limits
// it to the rows where it holds. Right-hand sides read the row as it was; they
// are qualified because in ON CONFLICT, EXCLUDED has the same columns.
function endpointHealthReset(when?: string): string {
  const reset = (column: string, value: string) =>
    when ? `${column} = CASE WHEN ${when} THEN ${value} ELSE webhook_subscriptions.${column} END` : `${column} = ${value}`;
  return [
    reset('concurrency_limit', '1'),
    reset('consecutive_failures', '0'),
    reset('slow', 'false'),
    reset(
      'circuit_changed_at',
      "CASE WHEN webhook_subscriptions.circuit_state = 'open' THEN now() ELSE webhook_subscriptions.circuit_changed_at END",
    ),
    reset('circuit_state', "'closed'"),
    reset('circuit_retry_at', 'NULL'),
    reset('circuit_opens', '0'),
  ].join(', ');
}

/**
 * Creates the subscription, or returns the existing one for the same
 * organization, client, event and URL (`inserted` false). Subscribing again
 * replaces the secret, and the rule it follows, when one is given, re-activates a disabled hook and
 * resets its endpoint health: the platform is asking for deliveries, under the
 * grant it asks with now.
 */
export async function upsertSubscription(
  db: Queryable,
  input: {
    clientId: string;
    grantId: string;
    event: string;
    callbackUrl: string;
    secret: { ciphertext: Buffer; format: SecretFormat } | null;
    /** Undefined: a new subscription has none, an existing one keeps its own. */
    filters: CallFiltersObject | undefined;
  },
): Promise<Subscription & { inserted: boolean }> {
  const { rows } = await db.query<Subscription & { inserted: boolean }>(
    `INSERT INTO webhook_subscriptions (organization_id, client_id, grant_id, event, callback_url, secret_ciphertext, secret_format, filters)
     VALUES (app_current_org(), $1, $2, $3, $4, $5, $6, coalesce($7::jsonb, '{}'))
     ON CONFLICT (organization_id, client_id, event, md5(callback_url)) DO UPDATE
        SET secret_ciphertext = COALESCE(EXCLUDED.secret_ciphertext, webhook_subscriptions.secret_ciphertext),
            secret_format = CASE WHEN EXCLUDED.secret_ciphertext IS NULL THEN webhook_subscriptions.secret_format
                                 ELSE EXCLUDED.secret_format END,
            grant_id = EXCLUDED.grant_id,
            filters = coalesce($7::jsonb, webhook_subscriptions.filters),
            status = 'active', disabled_at = NULL, disabled_reason = NULL, failing_since = NULL, updated_at = now(),
            ${endpointHealthReset()}
     RETURNING ${COLUMNS}, (xmax = 0) AS inserted`,
    [
      input.clientId,
      input.grantId,
      input.event,
      input.callbackUrl,
      input.secret?.ciphertext ?? null,
      input.secret?.format ?? 'plain',
      input.filters === undefined ? null : JSON.stringify(input.filters),
    ],
  );
  return rows[0]!;
}

/**
 * The sealed secret of the client's subscription to this event and URL, its
 * row locked until the transaction ends (so two subscribes that change it
 * each compare with what the other committed); undefined when there is none.
 */
export async function lockSubscriptionSecret(
  db: Queryable,
  input: { clientId: string; event: string; callbackUrl: string },
): Promise<{ sealed: Buffer | null } | undefined> {
  const { rows } = await db.query<{ sealed: Buffer | null }>(
    `SELECT secret_ciphertext AS sealed FROM webhook_subscriptions
      WHERE organization_id = app_current_org() AND client_id = $1 AND event = $2
        AND md5(callback_url) = md5($3) AND callback_url = $3
        FOR UPDATE`,
    [input.clientId, input.event, input.callbackUrl],
  );
  return rows[0];
}

/** The subscription.secret_changed event of one subscription: its usual details, never the secret. */
export async function recordSecretChanged(db: Queryable, input: { id: string; actor: AuditActor }): Promise<void> {
  await db.query(
    `SELECT app_audit_event(s.organization_id, 'subscription.secret_changed', ${actorArguments('$2::text', '$3::text', '$4::text')},
                            'subscription', s.id::text, NULL, app_audit_subscription_details(s))
       FROM webhook_subscriptions s WHERE s.id = $1`,
    [input.id, ...actorValues(input.actor)],
  );
}

export async function listSubscriptions(db: Queryable, clientId: string | undefined): Promise<Subscription[]> {
  const { rows } = await db.query<Subscription>(
    `SELECT ${COLUMNS} FROM webhook_subscriptions WHERE ($1::text IS NULL OR client_id = $1) ORDER BY created_at, id`,
    [clientId ?? null],
  );
  return rows;
}

export async function findSubscription(
  db: Queryable,
  input: { id: string; clientId: string | undefined },
): Promise<Subscription | undefined> {
  const { rows } = await db.query<Subscription>(
    `SELECT ${COLUMNS} FROM webhook_subscriptions WHERE id = $1 AND ($2::text IS NULL OR client_id = $2)`,
    [input.id, input.clientId ?? null],
  );
  return rows[0];
}

/**
 * findSubscription, with the row locked FOR SHARE until the transaction ends,
 * for requeueing many of its deliveries (recover): its deletion (which takes
 * the deliveries with it) and the stop of its grant (webhooks_stop_for_grants) wait for
 * the requeue, or the requeue waits for them and then finds it gone, or
 * disabled. Its claim lock (claim-lock.ts), taken after the row, keeps
 * claims away meanwhile (they skip a subscription whose claim lock is held):
 * a claim leasing some of the deliveries while the requeue updates others,
 * each in its own order, deadlocked.
 */
export async function lockSubscription(
  db: Queryable,
  input: { id: string; clientId: string | undefined },
): Promise<Subscription | undefined> {
  const { rows } = await db.query<Subscription>(
    `SELECT ${COLUMNS} FROM webhook_subscriptions WHERE id = $1 AND ($2::text IS NULL OR client_id = $2) FOR SHARE`,
    [input.id, input.clientId ?? null],
  );
  if (rows[0]) await db.query(`SELECT ${waitClaimLock('$1::uuid')}`, [input.id]);
  return rows[0];
}

/**
 * Re-enables a disabled subscription (a no-op on an active one, so its endpoint
 * health stays as it is); its paused deliveries resume, with the endpoint
 * health reset. Only while its grant still stands and its URL is one we
 * accept: undefined when the subscription is not visible, its grant has ended
 * or its URL is invalid (findSubscription tells which).
 */
export async function enableSubscription(
  db: Queryable,
  input: { id: string; clientId: string | undefined },
): Promise<Subscription | undefined> {
  const { rows } = await db.query<Subscription>(
    `UPDATE webhook_subscriptions
        SET status = 'active', disabled_at = NULL, disabled_reason = NULL,
            failing_since = CASE WHEN status = 'disabled' THEN NULL ELSE failing_since END,
            updated_at = CASE WHEN status = 'disabled' THEN now() ELSE updated_at END,
            ${endpointHealthReset("webhook_subscriptions.status = 'disabled'")}
      WHERE id = $1 AND ($2::text IS NULL OR client_id = $2) AND app_grant_is_live(grant_id)
        AND disabled_reason IS DISTINCT FROM 'invalid_url'
     RETURNING ${COLUMNS}`,
    [input.id, input.clientId ?? null],
  );
  return rows[0];
}

/**
 * Active subscriptions per circuit state, across every organization (owner
 * role, for /metrics). Zeros included, so a state that empties reads 0.
 */
export async function countCircuitStates(db: Queryable): Promise<Record<CircuitShown, number>> {
  const { rows } = await db.query<{ state: CircuitShown; count: number }>(
    `SELECT app_circuit_shown(circuit_state, circuit_retry_at) AS state, count(*)::int AS count
       FROM webhook_subscriptions WHERE status = 'active'
      GROUP BY 1`,
  );
  const counts: Record<CircuitShown, number> = { closed: 0, open: 0, probing: 0 };
  for (const row of rows) counts[row.state] = row.count;
  return counts;
}
