// One delivery as the call page and the subscription page show it: its state
// in words, when it is tried next, and Redeliver, or why it cannot be
// redelivered now (the refusals of redeliver, deliveries.service.ts).
import type { DeliveryLine } from '../../webhooks/deliveries.service.ts';
import type { SubscriptionView } from '../../webhooks/subscriptions.service.ts';
import { html } from '../html.ts';
import { postButton } from './fields.ts';
import { formatTime } from './format.ts';
import { canReenable, disabledBecause } from './webhooks.page.ts';

/** The delivery's state as a badge. */
export function deliveryBadge(d: DeliveryLine) {
  if (d.status === 'succeeded') return html`<span class="badge ok">Delivered</span>`;
  if (d.status === 'failed')
    return d.not_redeliverable === 'access_ended'
      ? html`<span class="badge bad">Dropped</span>`
      : html`<span class="badge bad">Failed</span>`;
  if (d.not_redeliverable === 'in_flight') return html`<span class="badge">Sending now</span>`;
  if (d.subscription_status !== 'active') return html`<span class="badge warn">Paused</span>`;
  return d.attempts === 0 ? html`<span class="badge">Waiting</span>` : html`<span class="badge warn">Will retry</span>`;
}

/** When it is tried next, or why it is not, in a phrase; '' when it is done. */
export function deliveryNext(d: DeliveryLine): string {
  if (d.status === 'failed')
    return d.not_redeliverable === 'access_ended' ? "never sent: the app's access ended" : 'failed for good: its retries are used up';
  if (d.status !== 'pending' || d.not_redeliverable === 'in_flight') return '';
  if (d.subscription_status !== 'active') return 'paused while the subscription is disabled';
  return `${d.attempts === 0 ? 'first attempt' : 'next retry'} at ${formatTime(d.next_attempt_at)}`;
}

const CANNOT_REDELIVER = {
  access_ended: "Can't redeliver: it was dropped when the app's access ended, and is never sent.",
  in_flight: "Can't redeliver yet: it is being sent right now. Reload in a moment.",
};

/** Why a disabled subscription's deliveries cannot be redelivered, and what to do. */
export function disabledRedeliver(s: SubscriptionView): string {
  return canReenable(s)
    ? 'the subscription is disabled; re-enable it first.'
    : `the subscription is disabled (${disabledBecause(s)}); the app must connect again and subscribe.`;
}

/**
 * Redeliver, or a line saying why not: the delivery was dropped, is being
 * sent, or its subscription is disabled (`disabled` says what to do then:
 * re-enable it, or connect the app again).
 */
export function redeliverControl(d: DeliveryLine, input: { action: string; csrf: string; disabled: string }) {
  if (d.not_redeliverable === 'subscription_disabled') return html`<p class="muted cannot">Can't redeliver: ${input.disabled}</p>`;
  if (d.not_redeliverable) return html`<p class="muted cannot">${CANNOT_REDELIVER[d.not_redeliverable]}</p>`;
  return postButton({ action: input.action, csrf: input.csrf, label: 'Redeliver' });
}
