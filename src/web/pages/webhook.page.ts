import type { AttemptView } from '../../webhooks/deliveries.service.ts';
import type { SubscriptionView } from '../../webhooks/subscriptions.service.ts';
import { html } from '../html.ts';
import { layout, type Navigation } from '../layout.ts';
import { circuitFacts } from './circuit.ts';
import { notice, postButton } from './fields.ts';
import { dash, excerpt, formatTime } from './format.ts';
import { canReenable, disabledBecause, subscriptionStatus } from './webhooks.page.ts';
import type { SubscriptionHealth } from '../../webhooks/delivery-health.service.ts';
import { subscriptionHealthSection } from './subscription-health.ts';

const OUTCOMES: Record<string, { label: string; tone: string }> = {
  succeeded: { label: 'Succeeded', tone: 'ok' },
  retrying: { label: 'Will retry', tone: 'warn' },
  failed: { label: 'Failed', tone: 'bad' },
  subscription_removed: { label: 'Gone (410): unsubscribed', tone: 'bad' },
  superseded: { label: 'Superseded', tone: '' },
};

function outcome(attempt: AttemptView) {
  const known = OUTCOMES[attempt.outcome] ?? { label: attempt.outcome, tone: '' };
  return html`<span class="badge ${known.tone}">${known.label}</span>`;
}

function response(attempt: AttemptView) {
  if (attempt.response_body === null || attempt.response_body === '') return dash;
  return html`<details><summary>${excerpt(attempt.response_body.replace(/\s+/g, ' '), 60)}</summary><pre>${attempt.response_body}</pre></details>`;
}

interface WebhookPageInput {
  nav: Navigation;
  subscription: SubscriptionView;
  clientName: string;
  attempts: AttemptView[];
  nextCursor: string | null;
  paged: boolean;
  notice?: string;
  problem?: string;
  health: SubscriptionHealth;
  /** The recover form's time (UTC, YYYY-MM-DDTHH:MM) and its error. */
  recoverSince: string;
  recoverError?: string;
}

/** One subscription and its delivery attempts, newest first; redeliver on each delivery's latest attempt. */
export function webhookPage(input: WebhookPageInput) {
  const { subscription: s, nav } = input;
  const base = `/ui/webhooks/${s.id}`;
  const seen = new Set<string>();
  const rows = input.attempts.map((a) => {
    // Attempts are newest first: the first row of a delivery is its latest attempt.
    const latest = !seen.has(a.delivery_id);
    seen.add(a.delivery_id);
    const redeliver =
      latest && s.status === 'active'
        ? postButton({ action: `${base}/deliveries/${a.delivery_id}/redeliver`, csrf: nav.csrf, label: 'Redeliver' })
        : '';
    return html`<tr>
      <td class="nowrap">${formatTime(a.attempted_at)}<br><a class="muted" href="/ui/calls/${a.call_id}">call</a> · <span class="muted">attempt ${a.attempt}</span></td>
      <td class="num">${a.status_code ?? dash}</td>
      <td class="num">${a.latency_ms === null ? dash : `${a.latency_ms} ms`}</td>
      <td>${outcome(a)}</td>
      <td class="wrap">${a.error ? html`<code>${a.error}</code>${a.error_message ? html`<br><span class="muted">${a.error_message}</span>` : ''}` : dash}</td>
      <td class="wrap">${response(a)}</td>
      <td class="row-actions">${redeliver}</td>
    </tr>`;
  });
  return layout({
    title: 'Webhook subscription',
    nav,
    wide: true,
    body: html`<div class="page-head">
  <h1>Webhook subscription ${subscriptionStatus(s)}</h1>
  <a href="/ui/webhooks">All webhooks</a>
</div>
${notice(input.notice)}
${input.problem ? html`<p class="error" role="alert">${input.problem}</p>` : ''}
<div class="card">
  <dl class="facts">
    <dt>Target URL</dt><dd>${s.callback_url}</dd>
    <dt>Event</dt><dd><code>${s.event}</code></dd>
    <dt>App</dt><dd>${input.clientName}</dd>
    <dt>Signed</dt><dd>${s.has_secret ? 'Yes: X-Signature and webhook-signature headers' : 'No secret given'}</dd>
    <dt>Created</dt><dd>${formatTime(s.created_at)}</dd>
    ${s.failing_since ? html`<dt>Failing since</dt><dd>${formatTime(s.failing_since)}</dd>` : ''}
    ${s.disabled_at ? html`<dt>Disabled at</dt><dd>${formatTime(s.disabled_at)}</dd>` : ''}
    ${s.status === 'disabled' ? html`<dt>Disabled because</dt><dd>${disabledBecause(s)}</dd>` : ''}
    ${circuitFacts(s)}
  </dl>
  <div class="actions">
    ${canReenable(s) ? postButton({ action: `${base}/enable`, csrf: nav.csrf, label: 'Re-enable', className: '' }) : ''}
    <a class="button secondary" href="${base}/delete">Delete subscription</a>
  </div>
</div>
${subscriptionHealthSection(s, input.health, {
  action: `${base}/recover`,
  csrf: nav.csrf,
  since: input.recoverSince,
  enabled: s.status === 'active',
  ...(input.recoverError ? { error: input.recoverError } : {}),
})}
<div class="card">
  <h2>Delivery attempts</h2>
  ${canReenable(s) ? html`<p class="muted">Re-enable the subscription to redeliver; its paused deliveries resume at once.</p>` : ''}
  ${s.status === 'disabled' && !canReenable(s) ? html`<p class="muted">Nothing more is sent to this URL: ${disabledBecause(s)}, and its pending deliveries were dropped. The app subscribes again once it is connected again.</p>` : ''}
  ${
    input.attempts.length === 0
      ? html`<p class="muted">${input.paged ? 'No older attempts.' : 'No delivery attempts yet. One is made for every completed call.'}</p>`
      : html`<table class="attempts"><thead><tr><th>Time</th><th class="num">Status</th><th class="num">Latency</th><th>Outcome</th><th>Error</th><th>Response</th><th></th></tr></thead><tbody>${rows}</tbody></table>`
  }
  <div class="pager">
    ${input.paged ? html`<a href="${base}">Newest attempts</a>` : html`<span></span>`}
    ${input.nextCursor ? html`<a href="${base}?cursor=${input.nextCursor}">Older attempts</a>` : ''}
  </div>
</div>`,
  });
}
