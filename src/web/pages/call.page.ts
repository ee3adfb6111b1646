import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { printableUrl } from '../../url-characters.ts';
import type { CallView } from '../../calls/call.ts';
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

/** An E.164 number as people write it (+44 20 7946 0123). */
function forPeople(e164: string): string {
  return parsePhoneNumberFromString(e164)?.formatInternational() ?? e164;
}

/** Only an https URL becomes a link; it opens without handing this page to the recording's site. */
function recordingLink(url: string | null) {
  if (url === null || !url.startsWith('https://')) return dash;
  return html`<a href="${url}" rel="noopener noreferrer" target="_blank">Listen to the recording</a>`;
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
    <dt>Agent</dt><dd>${call.agent_id ? (call.agent_name ?? input.agentName ?? 'Unknown agent') : dash}</dd>
    <dt>Direction</dt><dd>${call.direction === null ? dash : call.direction === 'inbound' ? 'Inbound' : 'Outbound'}</dd>
    <dt>From</dt><dd>${call.from_number === null ? dash : forPeople(call.from_number)}</dd>
    <dt>To</dt><dd>${call.to_number === null ? dash : forPeople(call.to_number)}</dd>
    <dt>Location</dt><dd>${call.location_name ?? dash}</dd>
    <dt>Recording</dt><dd>${recordingLink(call.recording_url)}</dd>
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
${
  call.transcript === null
    ? ''
    : html`<div class="card">
  <details><summary>Transcript</summary><p class="summary">${call.transcript}</p></details>
</div>`
}
<section class="card" aria-labelledby="deliveries-title">
  <h2 id="deliveries-title">Webhook deliveries</h2>
  ${deliveries(input)}
</section>`,
  });
}
