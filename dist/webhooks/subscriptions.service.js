import { CALL_COMPLETED } from '../calls/call-event.js';
import { withOrg } from '../db/with-org.js';
import * as errors from '../errors.js';
import { ValidationProblem } from '../http/problem-details.plugin.js';
import { notifyDeliveriesDue } from './deliveries.queries.js';
import { checkHookUrl, checkUrlShape } from './ssrf/check-hook-url.js';
import { deleteSubscription, deleteSubscriptionsByUrl, enableSubscription, findSubscription, listSubscriptions, upsertSubscription, } from './subscriptions.queries.js';
export function subscriptionView(row) {
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
    };
}
/** The OAuth client a platform call acts for; subscribe/unsubscribe exist only for platforms. */
function platformClient(principal) {
    if (principal.kind !== 'oauth' || !principal.clientId)
        throw new Error('platform route reached without the platform guard');
    return principal.clientId;
}
/** The grant the platform's access token belongs to: the subscription lives and ends with it. */
function platformGrant(principal) {
    if (principal.kind !== 'oauth' || !principal.grantId)
        throw new Error('platform route reached without the platform guard');
    return principal.grantId;
}
/** Which client's subscriptions the caller may see: all of the organization's for a user. */
function visibleClient(principal) {
    return principal.kind === 'oauth' ? principal.clientId : undefined;
}
function hookUrlProblem(check) {
    if (check.ok)
        return;
    const fieldErrors = [{ field: 'hookUrl', message: check.reason.replace(/^hookUrl /, '') }];
    throw new ValidationProblem(fieldErrors, check.rule === 'port' ? new errors.WEBHOOK_PORT_NOT_ALLOWED().code : undefined);
}
export async function subscribe(deps, principal, input) {
    const clientId = platformClient(principal);
    const grantId = platformGrant(principal);
    hookUrlProblem(await checkHookUrl(input.hookUrl, deps.urlCheck));
    const event = input.event ?? CALL_COMPLETED;
    const secretCiphertext = input.secret === undefined ? null : deps.secretBox.seal(input.secret, principal.organizationId);
    const row = await withOrg(deps.pool, principal.organizationId, (db) => upsertSubscription(db, { clientId, grantId, event, callbackUrl: input.hookUrl, secretCiphertext }));
    return { subscription: { id: row.id, event: row.event, callback_url: row.callback_url }, created: row.inserted };
}
/**
 * Removes the client's subscriptions with exactly this URL; none left is
 * success too. Only the URL's form is checked, not where its host points
 * now, so a hook whose name later resolves privately can still be removed.
 */
export async function unsubscribe(pool, principal, hookUrl) {
    const clientId = platformClient(principal);
    hookUrlProblem(checkUrlShape(hookUrl));
    return withOrg(pool, principal.organizationId, (db) => deleteSubscriptionsByUrl(db, { clientId, callbackUrl: hookUrl }));
}
export async function listVisibleSubscriptions(pool, principal) {
    const rows = await withOrg(pool, principal.organizationId, (db) => listSubscriptions(db, visibleClient(principal)));
    return rows.map(subscriptionView);
}
/** The subscription when the caller may see it; otherwise 404 (another organization's or client's id included). */
export async function getVisibleSubscription(pool, principal, id) {
    const row = await withOrg(pool, principal.organizationId, (db) => findSubscription(db, { id, clientId: visibleClient(principal) }));
    if (!row)
        throw new errors.WEBHOOK_SUBSCRIPTION_NOT_FOUND(id);
    return subscriptionView(row);
}
export async function removeSubscription(pool, principal, id) {
    const removed = await withOrg(pool, principal.organizationId, (db) => deleteSubscription(db, { id, clientId: visibleClient(principal) }));
    if (!removed)
        throw new errors.WEBHOOK_SUBSCRIPTION_NOT_FOUND(id);
}
/**
 * Re-enables a disabled subscription; its paused deliveries resume at once.
 * Refused once the grant it was made under has ended: the platform must be
 * connected again and subscribe anew.
 */
export async function reenableSubscription(pool, principal, id) {
    const row = await withOrg(pool, principal.organizationId, async (db) => {
        const clientId = visibleClient(principal);
        const enabled = await enableSubscription(db, { id, clientId });
        if (enabled) {
            await notifyDeliveriesDue(db);
            return enabled;
        }
        if (await findSubscription(db, { id, clientId }))
            throw new errors.WEBHOOK_SUBSCRIPTION_GRANT_ENDED(id);
        return undefined;
    });
    if (!row)
        throw new errors.WEBHOOK_SUBSCRIPTION_NOT_FOUND(id);
    return subscriptionView(row);
}
//# sourceMappingURL=subscriptions.service.js.map