import { printableUrl } from '../../http/url-characters.ts';
import type { CallView } from '../../calls/calls.service.ts';
import type { DeliveryLine } from '../../webhooks/deliveries.service.ts';
import { html } from '../html.ts';
import { layout, type Navigation } from '../layout.ts';
import { callStatusBadge } from './calls.page.ts';
import type { SubscriptionView } from '../../webhooks/subscriptions.service.ts';
import { deliveryBadge, deliveryNext, disabledRedeliver, redeliverControl } from './delivery.ts';
import { notice } from './fields.ts';
import { dash, formatDuration, formatTime } from './format.ts';

function lastAttempt(d: DeliveryLine) {
  const last = d.last_attempt;
  if (!last) return dash;
  const answer = last.status_code !== null ? `HTTP ${last.status_code}` : (last.error ?? '');
  return html`${formatTime(last.attempted_at)}${answer ? html`<br><span class="muted">${answer}</span>` : ''}`;
}

export interface CallPageInput {
  nav: Navigation;
  call: CallView;
  agentName: string | undefined;
  deliveries: DeliveryLine[];
  /** The subscriptions of the deliveries that cannot be redelivered because it is disabled: why, and what to do. */
  disabled: Map<string, SubscriptionView>;
  notice?: string;
  problem?: string;
}

/** Where the call.completed event went: one row per subscription, each linking to its delivery log, with Redeliver or why not. */
function deliveries(input: CallPageInput) {
  const { call, deliveries: list } = input;
  if (list.length === 0)
    return html`<p class="muted">${
      call.status === 'completed'
        ? 'No webhook subscription was active when this call completed, so it was not delivered anywhere.'
        : 'Nothing yet: a call is delivered to the webhook subscriptions when it completes.'
    }</p>`;
  const rows = list.map((d) => {
    const next = deliveryNext(d);
    const subscription = input.disabled.get(d.subscription_id);
    return html`<tr>
      <td class="wrap" data-label="Sent to"><a href="/ui/webhooks/${d.subscription_id}">${printableUrl(d.callback_url)}</a></td>
      <td data-label="Status">${deliveryBadge(d)}${next ? html`<br><span class="muted">${next}</span>` : ''}</td>
      <td class="num" data-label="Attempts">${d.attempts}</td>
      <td data-label="Last attempt">${lastAttempt(d)}</td>
      <td class="row-actions">${redeliverControl(d, {
        action: `/ui/calls/${call.id}/deliveries/${d.id}/redeliver`,
        csrf: input.nav.csrf,
        disabled: subscription ? disabledRedeliver(subscription) : 'the subscription is disabled.',
      })}</td>
    </tr>`;
  });
  return html`<table class="stack deliveries"><thead><tr><th>Sent to</th><th>Status</th><th class="num">Attempts</th><th>Last attempt</th><th><span class="visually-hidden">Redeliver</span></th></tr></thead><tbody>${rows}</tbody></table>
  <p class="muted">Open a subscription for every attempt of its delivery.</p>`;
}

export function callPage(input: CallPageInput) {
  const { call } = input;
  return layout({
    title: `Call ${formatTime(call.created_at)}`,
    nav: input.nav,
    wide: true,
    body: html`<div class="page-head">
  <h1>Call of ${formatTime(call.created_at)} ${callStatusBadge(call)}</h1>
  <a href="/ui/calls">All calls</a>
</div>
${notice(input.notice)}
${input.problem ? html`<p class="error" role="alert">${input.problem}</p>` : ''}
<div class="card">
  <dl class="facts">
    <dt>Agent</dt><dd>${call.agent_id ? (input.agentName ?? 'Unknown agent') : dash}</dd>
    <dt>Started</dt><dd>${formatTime(call.created_at)}</dd>
    <dt>Completed</dt><dd>${call.completed_at ? formatTime(call.completed_at) : dash}</dd>
    <dt>Duration</dt><dd>${call.duration_seconds === null ? dash : `${formatDuration(call.duration_seconds)} (${call.duration_seconds} s)`}</dd>
    <dt>Call id</dt><dd><code>${call.id}</code></dd>
  </dl>
</div>
<div class="card">
  <h2>Summary</h2>
  ${call.summary === null ? html`<p class="muted">No summary yet: the call is still in progress.</p>` : html`<p class="summary">${call.summary}</p>`}
</div>
<section class="card" aria-labelledby="deliveries-title">
  <h2 id="deliveries-title">Webhook deliveries</h2>
  ${deliveries(input)}
</section>`,
  });
}
