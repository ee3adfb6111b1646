import type { CallView } from '../../calls/calls.service.ts';
import type { DeliveryLine } from '../../webhooks/deliveries.service.ts';
import { html } from '../html.ts';
import { layout, type Navigation } from '../layout.ts';
import { callStatusBadge } from './calls.page.ts';
import { deliveryBadge, deliveryNext } from './delivery.ts';
import { dash, formatDuration, formatTime } from './format.ts';

function lastAttempt(d: DeliveryLine) {
  const last = d.last_attempt;
  if (!last) return dash;
  const answer = last.status_code !== null ? `HTTP ${last.status_code}` : (last.error ?? '');
  return html`${formatTime(last.attempted_at)}${answer ? html`<br><span class="muted">${answer}</span>` : ''}`;
}

/** Where the call.completed event went: one row per subscription, each linking to its delivery log. */
function deliveries(call: CallView, list: DeliveryLine[]) {
  if (list.length === 0)
    return html`<p class="muted">${
      call.status === 'completed'
        ? 'No webhook subscription was active when this call completed, so it was not delivered anywhere.'
        : 'Nothing yet: a call is delivered to the webhook subscriptions when it completes.'
    }</p>`;
  const rows = list.map((d) => {
    const next = deliveryNext(d);
    return html`<tr>
      <td class="wrap" data-label="Sent to"><a href="/ui/webhooks/${d.subscription_id}">${d.callback_url}</a></td>
      <td data-label="Status">${deliveryBadge(d)}${next ? html`<br><span class="muted">${next}</span>` : ''}</td>
      <td class="num" data-label="Attempts">${d.attempts}</td>
      <td data-label="Last attempt">${lastAttempt(d)}</td>
    </tr>`;
  });
  return html`<table class="stack deliveries"><thead><tr><th>Sent to</th><th>Status</th><th class="num">Attempts</th><th>Last attempt</th></tr></thead><tbody>${rows}</tbody></table>
  <p class="muted">Open a subscription for every attempt of its delivery, and to redeliver.</p>`;
}

export function callPage(input: { nav: Navigation; call: CallView; agentName: string | undefined; deliveries: DeliveryLine[] }) {
  const { call } = input;
  return layout({
    title: `Call ${formatTime(call.created_at)}`,
    nav: input.nav,
    wide: true,
    body: html`<div class="page-head">
  <h1>Call of ${formatTime(call.created_at)} ${callStatusBadge(call)}</h1>
  <a href="/ui/calls">All calls</a>
</div>
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
  ${deliveries(call, input.deliveries)}
</section>`,
  });
}
