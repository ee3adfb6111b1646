import { printableUrl } from '../../url-characters.ts';
import type { SubscriptionUsage, SubscriptionView } from '../../webhooks/subscriptions.service.ts';
import { html } from '../html.ts';
import { layout, type Navigation } from '../layout.ts';
import { circuitBadge, circuitPhrase, circuitTripped } from './circuit.ts';
import { notice, postButton } from './fields.ts';
import { formatTime } from './format.ts';

const DISABLED_BECAUSE: Record<string, string> = {
  delivery_failures: 'its deliveries failed for five days',
  grant_revoked: "the app's access was revoked",
  user_deactivated: 'the user who connected the app was deactivated',
  organization_deactivated: 'the organization was deactivated',
  membership_removed: 'the user who connected the app left the organization',
  invalid_url: 'its URL holds a control character, a space or a non-ASCII character',
};

/** Why a subscription is disabled, as a phrase ("its deliveries failed for five days"). */
export function disabledBecause(subscription: SubscriptionView): string {
  return DISABLED_BECAUSE[subscription.disabled_reason ?? ''] ?? 'disabled';
}

/** Only a hook disabled for failures can be re-enabled here; one whose app access ended needs the app to subscribe again. */
export function canReenable(subscription: SubscriptionView): boolean {
  return subscription.status === 'disabled' && subscription.disabled_reason === 'delivery_failures';
}

/** The status badge, and beside it the circuit's while it is open or probing. */
export function subscriptionStatus(subscription: SubscriptionView) {
  if (subscription.status === 'disabled')
    return html`<span class="badge bad" title="Disabled: ${disabledBecause(subscription)}">Disabled</span>`;
  if (subscription.failing_since)
    return html`<span class="badge warn" title="failing since ${formatTime(subscription.failing_since)}">Failing</span>${circuitBadge(subscription)}`;
  return html`<span class="badge ok">Active</span>${circuitBadge(subscription)}`;
}

/** The organization's webhook subscriptions, each with its status and a way to its delivery attempts. */
export function webhooksPage(input: {
  nav: Navigation;
  subscriptions: SubscriptionView[];
  usage: SubscriptionUsage;
  clients: Map<string, string>;
  notice?: string;
}) {
  const { csrf } = input.nav;
  const rows = input.subscriptions.map(
    (s) => html`<tr>
      <td class="wrap"><a href="/ui/webhooks/${s.id}">${printableUrl(s.callback_url)}</a></td>
      <td data-label="Event"><code>${s.event}</code></td>
      <td data-label="Status">${subscriptionStatus(s)}${s.status === 'disabled' ? html`<br><span class="muted">${disabledBecause(s)}</span>` : ''}${circuitTripped(s) ? html`<br><span class="muted">${circuitPhrase(s)}</span>` : ''}</td>
      <td class="wrap" data-label="App">${input.clients.get(s.client_id) ?? s.client_id}</td>
      <td class="nowrap" data-label="Since">${formatTime(s.created_at).slice(0, 10)}</td>
      <td class="row-actions">
        <a class="button secondary small" href="/ui/webhooks/${s.id}">Deliveries</a>
        ${canReenable(s) ? postButton({ action: `/ui/webhooks/${s.id}/enable`, csrf, label: 'Re-enable' }) : ''}
        <a class="button secondary small" href="/ui/webhooks/${s.id}/delete">Delete</a>
      </td>
    </tr>`,
  );
  return layout({
    title: 'Webhooks',
    nav: input.nav,
    wide: true,
    body: html`<div class="page-head"><h1>Webhooks</h1></div>
${notice(input.notice)}
<div class="card">
  <p class="lead">Where Switchboard sends <code>call.completed</code> events. Connected apps create these subscriptions; a subscription whose deliveries only failed for five days is disabled until you re-enable it, and one whose app is disconnected (or whose user or organization is deactivated) stops at once.</p>
  <p id="subscription-usage">${input.usage.active} of ${input.usage.limit} active subscriptions used${input.usage.active >= input.usage.limit ? ": the limit is reached, so an app's new subscription is refused until one is deleted" : ''}.</p>
  ${
    input.subscriptions.length === 0
      ? html`<p class="muted">No webhook subscriptions. They appear when a connected app subscribes to call events.</p>`
      : html`<table class="stack"><thead><tr><th>Target URL</th><th>Event</th><th>Status</th><th>App</th><th>Since</th><th></th></tr></thead><tbody>${rows}</tbody></table>`
  }
</div>`,
  });
}
