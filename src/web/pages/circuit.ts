// A subscription's circuit breaker and concurrency limit as the pages say
// them: a badge beside its status, facts on its page, and a line over its
// delivery charts. The state comes from the API's view (app_circuit_shown).
import { MAX_IN_FLIGHT_PER_SUBSCRIPTION } from '../../webhooks/worker/endpoint-health.ts';
import type { SubscriptionView } from '../../webhooks/subscriptions.service.ts';
import { html } from '../html.ts';
import { formatTime } from './format.ts';

/** Open or probing while the subscription is active (a disabled one sends nothing anyway). */
export function circuitTripped(subscription: SubscriptionView): boolean {
  return subscription.status === 'active' && subscription.circuit.state !== 'closed';
}

/** An open or probing circuit in a phrase ("circuit open since …, next probe at …"); '' while closed. */
export function circuitPhrase(subscription: SubscriptionView): string {
  const c = subscription.circuit;
  if (c.state === 'open') return `circuit open since ${formatTime(c.since)}, next probe at ${formatTime(c.next_probe_at)}`;
  if (c.state === 'probing') return `circuit open since ${formatTime(c.since)}, probing: the next attempt is a probe`;
  return '';
}

/** "Circuit open" or "Probing", beside the status badge; nothing while closed. */
export function circuitBadge(subscription: SubscriptionView) {
  if (!circuitTripped(subscription)) return '';
  const c = subscription.circuit;
  return c.state === 'open'
    ? html`<span class="badge bad" title="circuit open since ${formatTime(c.since)}; next probe at ${formatTime(c.next_probe_at)}">Circuit open</span>`
    : html`<span class="badge warn" title="circuit open since ${formatTime(c.since)}; the next attempt is a probe">Probing</span>`;
}

function concurrency(limit: number): string {
  const attempts = `${limit} ${limit === 1 ? 'attempt' : 'attempts'} at a time`;
  return limit < MAX_IN_FLIGHT_PER_SUBSCRIPTION
    ? `${attempts} (one more per healthy answer, up to ${MAX_IN_FLIGHT_PER_SUBSCRIPTION})`
    : `${attempts} (the full limit)`;
}

/** The subscription page's facts: circuit state and since when, next probe, failures in a row, concurrency limit. */
export function circuitFacts(subscription: SubscriptionView) {
  const c = subscription.circuit;
  // 'probing' is no state of its own: it is still open, since it opened.
  const state = { closed: 'Closed', open: 'Open', probing: 'Probing' }[c.state];
  const since = c.state === 'probing' ? 'open since' : 'since';
  return html`<dt>Circuit</dt><dd>${state}${c.since ? html` <span class="muted">${since} ${formatTime(c.since)}</span>` : ''}</dd>
    ${c.state === 'open' ? html`<dt>Next probe</dt><dd>${formatTime(c.next_probe_at)}</dd>` : ''}
    ${c.state === 'probing' ? html`<dt>Next probe</dt><dd>Now: the wait ended at ${formatTime(c.next_probe_at)}</dd>` : ''}
    <dt>Failures in a row</dt><dd>${c.consecutive_failures}</dd>
    <dt>Concurrency limit</dt><dd>${concurrency(c.concurrency_limit)}</dd>`;
}

/** Over the delivery charts: why nothing (or only a probe) is sent now; nothing while closed. */
export function circuitLine(subscription: SubscriptionView) {
  if (!circuitTripped(subscription)) return '';
  const c = subscription.circuit;
  return c.state === 'open'
    ? html`<p class="circuit error">Circuit open since ${formatTime(c.since)} — next probe at ${formatTime(c.next_probe_at)}. Nothing is sent to this URL until then.</p>`
    : html`<p class="circuit warning">Circuit open since ${formatTime(c.since)} — its wait ended at ${formatTime(c.next_probe_at)}: the next attempt is a probe, one at a time, and a healthy answer closes the circuit.</p>`;
}
