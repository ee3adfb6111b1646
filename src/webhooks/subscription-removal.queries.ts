// Removing call.completed subscriptions of the current organization (inside
// withOrg), each with its subscription.deleted audit event written by the
// same statement.
import type { Queryable } from '../db/pool.ts';
import type { AuditActor } from '../audit/audit-actor.ts';
import { actorArguments, actorValues } from '../audit/audit-events.queries.ts';

/**
 * Removes the client's subscriptions with exactly this URL (any event); returns
 * how many. Each one's subscription.deleted event (reason unsubscribed) is
 * written by the same statement.
 */
export async function deleteSubscriptionsByUrl(
  db: Queryable,
  input: { clientId: string; callbackUrl: string; actor: AuditActor },
): Promise<number> {
  const { rowCount } = await db.query(
    `WITH removed AS (
       DELETE FROM webhook_subscriptions s
        WHERE s.client_id = $1 AND md5(s.callback_url) = md5($2) AND s.callback_url = $2
       RETURNING s AS removed_row
     )
     ${deletedEvents("'unsubscribed'")}`,
    [input.clientId, input.callbackUrl, ...actorValues(input.actor)],
  );
  return rowCount ?? 0;
}

/** The subscription.deleted events of the rows a `removed` CTE returned, actor in $3, $4, $5 (a row each). */
function deletedEvents(reason: string): string {
  return `SELECT app_audit_event((r.removed_row).organization_id, 'subscription.deleted', ${actorArguments('$3::text', '$4::text', '$5::text')},
                          'subscription', (r.removed_row).id::text, ${reason}, app_audit_subscription_details(r.removed_row))
       FROM removed r`;
}

/** Removes one subscription, with its subscription.deleted event (reason deleted) in the same statement. */
export async function deleteSubscription(
  db: Queryable,
  input: { id: string; clientId: string | undefined; actor: AuditActor },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `WITH removed AS (
       DELETE FROM webhook_subscriptions s WHERE s.id = $1 AND ($2::text IS NULL OR s.client_id = $2) RETURNING s AS removed_row
     )
     ${deletedEvents("'deleted'")}`,
    [input.id, input.clientId ?? null, ...actorValues(input.actor)],
  );
  return (rowCount ?? 0) > 0;
}
