// A subscription's circuit breaker and concurrency limit as the pages say
// them: a badge beside its status, facts on its page, and a line over its
// delivery charts. The state comes from the API's view (app_circuit_shown).
// Each says first what it means for sending, in plain words ("Delivering
// normally"; a closed circuit read as "blocked" by someone who is no
// electrician), and the technical state after it in brackets for engineers.
import { MAX_IN_FLIGHT_PER_SUBSCRIPTION } from '../../webhooks/worker/endpoint-health.ts';
import type { SubscriptionView } from '../../webhooks/subscriptions.service.ts';
import { html } from '../html.ts';
import { formatTime } from './format.ts';

/** Open or probing while the subscription is active (a disabled one sends nothing anyway). */
export function circuitTripped(subscription: SubscriptionView): boolean {
  return subscription.status === 'active' && subscription.circuit.state !== 'closed';
}

/** An open or probing circuit in a phrase ("sending paused since … (circuit open), next try at …"); '' while closed. */
export function circuitPhrase(subscription: SubscriptionView): string {
  const c = subscription.circuit;
  if (c.state === 'open') return `sending paused since ${formatTime(c.since)} (circuit open), next try at ${formatTime(c.next_probe_at)}`;
  if (c.state === 'probing') return `testing the URL with one delivery (circuit probing, open since ${formatTime(c.since)})`;
  return '';
}

/** "Sending paused" or "Testing URL", beside the status badge; nothing while closed. */
export function circuitBadge(subscription: SubscriptionView) {
  if (!circuitTripped(subscription)) return '';
  const c = subscription.circuit;
  return c.state === 'open'
    ? html`<span class="badge bad" title="circuit open since ${formatTime(c.since)}; next try at ${formatTime(c.next_probe_at)}">Sending paused</span>`
    : html`<span class="badge warn" title="circuit probing, open since ${formatTime(c.since)}; the next attempt is a test">Testing URL</span>`;
}

function concurrency(limit: number): string {
  const attempts = `${limit} ${limit === 1 ? 'attempt' : 'attempts'} at a time`;
  return limit < MAX_IN_FLIGHT_PER_SUBSCRIPTION
    ? `${attempts} (one more per healthy answer, up to ${MAX_IN_FLIGHT_PER_SUBSCRIPTION})`
    : `${attempts} (the full limit)`;
}

const SENDING = {
  closed: { words: 'Delivering normally', circuit: 'circuit closed' },
  open: { words: 'Sending paused after repeated failures', circuit: 'circuit open' },
  // 'probing' is no state of its own: it is still open, since it opened.
  probing: { words: 'Testing the URL with one delivery', circuit: 'circuit probing, open' },
};

/** The subscription page's facts: how sending goes (the circuit state) and since when, next try, failures in a row, concurrency limit. */
export function circuitFacts(subscription: SubscriptionView) {
  const c = subscription.circuit;
  const sending = SENDING[c.state];
  const circuit = c.since ? `${sending.circuit} since ${formatTime(c.since)}` : sending.circuit;
  return html`<dt>Sending</dt><dd>${sending.words} <span class="muted">(${circuit})</span></dd>
    ${c.state === 'open' ? html`<dt>Next try</dt><dd>${formatTime(c.next_probe_at)}</dd>` : ''}
    ${c.state === 'probing' ? html`<dt>Next try</dt><dd>Now: the pause ended at ${formatTime(c.next_probe_at)}</dd>` : ''}
    <dt>Failures in a row</dt><dd>${c.consecutive_failures}</dd>
    <dt>Concurrency limit</dt><dd>${concurrency(c.concurrency_limit)}</dd>`;
}

/** Over the delivery charts: why nothing (or only a probe) is sent now; nothing while closed. */
export function circuitLine(subscription: SubscriptionView) {
  if (!circuitTripped(subscription)) return '';
  const c = subscription.circuit;
  return c.state === 'open'
    ? html`<p class="circuit error">Sending is paused: this URL kept failing (circuit open since ${formatTime(c.since)}). The next try is at ${formatTime(c.next_probe_at)}; nothing is sent to this URL until then.</p>`
    : html`<p class="circuit warning">Testing this URL: the pause ended at ${formatTime(c.next_probe_at)}, so the next attempt is a single test delivery (circuit probing, open since ${formatTime(c.since)}); a healthy answer resumes normal sending.</p>`;
}
