// The delivery-health part of a subscription's page: the circuit breaker
// (its endpoint's health) when it is open or probing, attempt outcomes per
// hour and per day (the hour and day the circuit opened marked), latency, the
// last error in words, and Recover.
import type { OutcomeBucket, DeliveryHealth } from '../../webhooks/delivery-health.service.ts';
import type { LatencyPercentiles } from '../../webhooks/delivery-health.queries.ts';
import { RECOVER_BATCH } from '../../webhooks/recovery.service.ts';
import type { SubscriptionView } from '../../webhooks/subscriptions.service.ts';
import { barChart, type Series } from '../charts/bar-chart.ts';
import { html } from '../html.ts';
import { circuitLine, circuitTripped } from './circuit.ts';
import { hiddenCsrf } from './fields.ts';
import { formatTime } from './format.ts';

const SERIES: Series[] = [
  { label: 'Succeeded', tone: 'ok' },
  { label: 'Will retry', tone: 'warn' },
  { label: 'Failed', tone: 'bad' },
];

function summarize(buckets: OutcomeBucket[], span: string): string {
  const sum = (key: 'succeeded' | 'retrying' | 'failed') => buckets.reduce((a, b) => a + b[key], 0);
  const [ok, retry, failed] = [sum('succeeded'), sum('retrying'), sum('failed')];
  const total = ok + retry + failed;
  if (total === 0) return `No delivery attempts in the last ${span}.`;
  return `${total} attempts in the last ${span}: ${ok} succeeded, ${retry} failed and will be retried, ${failed} failed for good.`;
}

/** Where the circuit opened, when it is open or probing and that hour (or day) is in the chart. */
function circuitMark(subscription: SubscriptionView, buckets: OutcomeBucket[], hourly: boolean) {
  const since = subscription.circuit.since;
  if (!circuitTripped(subscription) || !since) return undefined;
  const index = buckets.findIndex((b) => b.label === since.slice(0, hourly ? 13 : 10));
  if (index < 0) return undefined;
  const when = hourly ? `${since.slice(0, 13).replace('T', ' ')}:00 UTC` : since.slice(0, 10);
  return {
    index,
    label: 'circuit opened',
    title: `Circuit opened ${formatTime(since)}`,
    sentence: ` The circuit opened ${hourly ? 'in the hour of' : 'on'} ${when} (marked with a dashed line) and is ${subscription.circuit.state === 'open' ? 'still open' : 'probing'}.`,
  };
}

function chart(id: string, title: string, span: string, buckets: OutcomeBucket[], hourly: boolean, subscription: SubscriptionView) {
  const mark = circuitMark(subscription, buckets, hourly);
  return barChart({
    id,
    title,
    summary: summarize(buckets, span) + (mark?.sentence ?? ''),
    ...(mark ? { mark: { index: mark.index, label: mark.label, title: mark.title } } : {}),
    series: SERIES,
    categories: buckets.map((b) => ({
      label: hourly ? `${b.label.replace('T', ' ')}:00 UTC` : b.label,
      short: hourly ? b.label.slice(11, 13) : b.label.slice(5),
      values: [b.succeeded, b.retrying, b.failed],
    })),
    labelEvery: hourly ? 3 : 1,
    categoryHeader: hourly ? 'Hour (UTC)' : 'Day (UTC)',
  });
}

function latency(label: string, l: LatencyPercentiles) {
  const ms = (v: number | null) => (v === null ? '—' : `${v} ms`);
  return html`<div><dt>${label} p50</dt><dd>${ms(l.p50)}</dd></div><div><dt>${label} p95</dt><dd>${ms(l.p95)}</dd></div>`;
}

/** datetime-local value, UTC, minutes. */
function localValue(iso: string): string {
  return iso.slice(0, 16);
}

export interface RecoverForm {
  action: string;
  csrf: string;
  /** The value to show (UTC, YYYY-MM-DDTHH:MM). */
  since: string;
  error?: string;
  enabled: boolean;
}

function recoverForm(health: DeliveryHealth, form: RecoverForm) {
  const n = health.failedDeliveries;
  const count =
    n === 0
      ? 'No delivery has failed for good in the last 30 days.'
      : n > RECOVER_BATCH
        ? `More than ${RECOVER_BATCH} deliveries failed for good in the last 30 days; each Recover queues ${RECOVER_BATCH}, oldest first.`
        : `${n} ${n === 1 ? 'delivery' : 'deliveries'} failed for good in the last 30 days.`;
  const invalid = form.error ? html` aria-invalid="true" aria-describedby="since-hint since-error"` : html` aria-describedby="since-hint"`;
  return html`<section class="card" aria-labelledby="recover-title">
  <h2 id="recover-title">Recover failed deliveries</h2>
  <p>${count} Recover sends every failed delivery created since the time you choose again, with its original X-Delivery-Id. Deliveries already queued or being sent are not sent twice.</p>
  ${
    form.enabled
      ? html`<form method="post" action="${form.action}" class="recover">
    ${hiddenCsrf(form.csrf)}
    <div class="field">
      <label for="since">Failed since (UTC)</label>
      <input id="since" name="since" type="datetime-local" value="${form.since}" required${invalid}>
      <p class="hint" id="since-hint">Within the last 30 days.</p>
      ${form.error ? html`<p class="field-error" id="since-error">${form.error}</p>` : ''}
    </div>
    <div class="actions"><button type="submit">Recover</button></div>
  </form>`
      : html`<p class="muted">Re-enable the subscription to recover its deliveries.</p>`
  }
</section>`;
}

export function deliveryHealthSection(subscription: SubscriptionView, health: DeliveryHealth, form: RecoverForm) {
  const lastError = health.lastError;
  return html`<section class="card" aria-labelledby="health-title">
  <h2 id="health-title">Delivery health</h2>
  ${circuitLine(subscription)}
  ${
    lastError
      ? html`<div class="last-error ${subscription.failing_since ? 'error' : ''}">
      <p><strong>Last error</strong> (${formatTime(lastError.at)}, attempt ${lastError.attempt}): ${lastError.words}</p>
      ${lastError.detail ? html`<p class="muted wrap">${lastError.detail}</p>` : ''}
    </div>`
      : html`<p class="muted">No failed attempts in the delivery log.</p>`
  }
  <dl class="stats">${latency('24 h', health.latency24h)}<div><dt>Answered, 24 h</dt><dd>${health.latency24h.answered}</dd></div></dl>
  <div class="grid-2 charts">
    <div><h3>Last 24 hours, per hour</h3>${chart('attempts-hourly', 'Delivery attempts per hour, last 24 hours', '24 hours', health.perHour, true, subscription)}</div>
    <div><h3>Last 7 days, per day</h3>${chart('attempts-daily', 'Delivery attempts per day, last 7 days', '7 days', health.perDay, false, subscription)}</div>
  </div>
</section>
${recoverForm(health, form)}`;
}

export { localValue };
