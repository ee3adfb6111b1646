import { printableUrl } from '../../url-characters.ts';
import type { AttemptView, DeliveryLine } from '../../webhooks/deliveries.service.ts';
import type { SubscriptionView } from '../../webhooks/subscriptions.service.ts';
import { html } from '../html.ts';
import { layout, type Navigation } from '../layout.ts';
import { circuitFacts } from './circuit.ts';
import { deliveryBadge, deliveryNext, disabledRedeliver, redeliverControl } from './delivery.ts';
import { notice, postButton } from './fields.ts';
import { dash, excerpt, formatTime } from './format.ts';
import { canReenable, disabledBecause, subscriptionStatus } from './webhooks.page.ts';
import type { DeliveryHealth } from '../../webhooks/delivery-health.service.ts';
import { deliveryHealthSection } from './delivery-health.ts';
import type { AuditEventView } from '../../audit/audit-events.service.ts';
import { activityTable } from './activity.page.ts';

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
  /** Deliveries not attempted yet (first page only), then those attempted, the most recently attempted first. */
  waiting: DeliveryLine[];
  deliveries: (DeliveryLine & { attempt_log: AttemptView[] })[];
  nextCursor: string | null;
  paged: boolean;
  /** Its newest audit events (owners and admins only; absent for the others). */
  activity?: AuditEventView[];
  notice?: string;
  problem?: string;
  health: DeliveryHealth;
  /** The recover form's time (UTC, YYYY-MM-DDTHH:MM) and its error. */
  recoverSince: string;
  recoverError?: string;
}

const COLUMNS = 6;

function attemptRow(a: AttemptView) {
  return html`<tr>
      <td class="nowrap" data-label="Attempt">${a.attempt} <span class="muted">· ${formatTime(a.attempted_at)}</span><br><span class="muted trace">trace <code>${a.trace_id}</code></span></td>
      <td class="num" data-label="Status">${a.status_code ?? dash}</td>
      <td class="num" data-label="Latency">${a.latency_ms === null ? dash : `${a.latency_ms} ms`}</td>
      <td data-label="Outcome">${outcome(a)}</td>
      <td class="wrap" data-label="Error">${a.error ? html`<code>${a.error}</code>${a.error_message ? html`<br><span class="muted">${a.error_message}</span>` : ''}` : dash}</td>
      <td class="wrap" data-label="Response">${response(a)}</td>
    </tr>`;
}

/** One delivery: a heading row (its call, state, next retry, Redeliver or why not), then its attempts, newest first. */
function deliveryGroup(
  d: DeliveryLine & { attempt_log?: AttemptView[] },
  input: { base: string; csrf: string; subscription: SubscriptionView },
) {
  const next = deliveryNext(d);
  const log = d.attempt_log ?? [];
  // `attempts` counts one in flight, which has no row yet.
  const hidden = d.attempts - (d.in_flight ? 1 : 0) - log.length;
  return html`<tbody class="delivery">
    <tr class="delivery-head"><th colspan="${COLUMNS}" scope="rowgroup">
      <div class="delivery-summary">
        <div>
          <a href="/ui/calls/${d.call_id}">Call of ${formatTime(d.created_at)}</a> ${deliveryBadge(d)}
          <br><span class="muted">${d.attempts} ${d.attempts === 1 ? 'attempt' : 'attempts'}${next ? ` · ${next}` : ''}${hidden > 0 ? ` · the ${hidden} oldest not shown` : ''}</span>
        </div>
        ${redeliverControl(d, {
          action: `${input.base}/deliveries/${d.id}/redeliver`,
          csrf: input.csrf,
          disabled: disabledRedeliver(input.subscription),
        })}
      </div>
    </th></tr>
    ${log.map(attemptRow)}
  </tbody>`;
}

/** Which key webhook-signature uses (docs/interface.md §6.2): a receiver's verifier must be set up to match. */
/** The subscription's filters in words (docs/interface.md §4.2); every call when it has none. */
function filtersInWords(filters: SubscriptionView['filters']): string {
  const parts = [
    filters.direction ? `${filters.direction} calls only` : '',
    filters.location_id ? `location ${filters.location_id}` : '',
    filters.agent_id ? `agent ${filters.agent_id}` : '',
    filters.min_duration_seconds !== undefined ? `at least ${filters.min_duration_seconds} s` : '',
  ].filter(Boolean);
  return parts.length ? parts.join('; ') : 'Every call';
}

function signedWith(format: SubscriptionView['secret_format']): string {
  if (format === null) return 'No secret given';
  if (format === 'whsec') return 'Yes: X-Signature, and webhook-signature keyed with the decoded whsec_ secret (Standard Webhooks)';
  return "Yes: X-Signature, and webhook-signature keyed with the secret's own bytes";
}

/** The subscription's own audit events, newest first, and the way to the rest. */
function activitySection(s: SubscriptionView, events: AuditEventView[]) {
  return html`<div class="card">
  <h2>Activity</h2>
  ${
    events.length === 0
      ? html`<p class="muted">No activity recorded for this subscription.</p>`
      : activityTable(events, { subscriptions: new Set([s.id]) }, 'Activity of this subscription, newest first')
  }
  <p><a href="/ui/activity">All activity of the organization</a></p>
</div>`;
}

/** One subscription and its deliveries, the one attempted most recently first, each with its attempts and Redeliver. */
export function webhookPage(input: WebhookPageInput) {
  const { subscription: s, nav } = input;
  const base = `/ui/webhooks/${s.id}`;
  const groups = [...input.waiting, ...input.deliveries].map((d) => deliveryGroup(d, { base, csrf: nav.csrf, subscription: s }));
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
    <dt>Target URL</dt><dd>${printableUrl(s.callback_url)}</dd>
    <dt>Event</dt><dd><code>${s.event}</code></dd>
    <dt>Filters</dt><dd>${filtersInWords(s.filters)}</dd>
    <dt>App</dt><dd>${input.clientName}</dd>
    <dt>Signed</dt><dd>${signedWith(s.secret_format)}</dd>
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
${deliveryHealthSection(s, input.health, {
  action: `${base}/recover`,
  csrf: nav.csrf,
  since: input.recoverSince,
  enabled: s.status === 'active',
  ...(input.recoverError ? { error: input.recoverError } : {}),
})}
<div class="card">
  <h2>Deliveries</h2>
  ${canReenable(s) ? html`<p class="muted">Re-enable the subscription to redeliver; its paused deliveries resume at once.</p>` : ''}
  ${s.status === 'disabled' && !canReenable(s) ? html`<p class="muted">Nothing more is sent to this URL: ${disabledBecause(s)}, and its pending deliveries were dropped. The app subscribes again once it is connected again.</p>` : ''}
  ${
    groups.length === 0
      ? html`<p class="muted">${input.paged ? 'No older deliveries.' : 'No delivery attempts yet. One delivery is made for every completed call.'}</p>`
      : html`<table class="attempts stack"><caption class="visually-hidden">Deliveries and their attempts, the delivery attempted most recently first</caption><thead><tr><th>Attempt</th><th class="num">Status</th><th class="num">Latency</th><th>Outcome</th><th>Error</th><th>Response</th></tr></thead>${groups}</table>`
  }
  <div class="pager">
    ${input.paged ? html`<a href="${base}">Newest deliveries</a>` : html`<span></span>`}
    ${input.nextCursor ? html`<a href="${base}?cursor=${input.nextCursor}">Older deliveries</a>` : ''}
  </div>
</div>
${input.activity ? activitySection(s, input.activity) : ''}`,
  });
}
