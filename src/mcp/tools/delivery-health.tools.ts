// get_delivery_health: how the organization's webhooks are doing, each
// subscription in a line: the receiver's host (never its full URL, which may
// carry a secret token in its path), its state, the circuit in words, the last
// success and the failures of the last 24 hours.
import { Type } from '@sinclair/typebox';
import { organizationDeliveryHealth } from '../../webhooks/delivery-health.service.ts';
import type { SubscriptionView } from '../../webhooks/subscriptions.service.ts';
import { count, defineTool, READ_ONLY } from './tool.ts';

const CIRCUIT_WORDS = {
  closed: 'delivering normally',
  open: 'sending paused after repeated failures',
  probing: 'testing the URL with one delivery',
} as const;

function circuitWords(subscription: SubscriptionView): string {
  const words = CIRCUIT_WORDS[subscription.circuit.state];
  return subscription.circuit.state === 'open' && subscription.circuit.next_probe_at
    ? `${words}; next try at ${subscription.circuit.next_probe_at}`
    : words;
}

const Health = Type.Object({
  id: Type.String(),
  url_host: Type.String(),
  event: Type.String(),
  state: Type.String({ description: 'active or disabled' }),
  circuit: Type.String({ description: 'the circuit breaker in words' }),
  last_success_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  failures_24h: Type.Integer({ description: 'failed attempts in the last 24 hours' }),
});

export const getDeliveryHealth = defineTool({
  name: 'get_delivery_health',
  title: 'Webhook delivery health',
  description: "How each of the organization's webhook subscriptions is delivering: state, circuit, last success, failures in 24 h.",
  scope: 'calls:read',
  annotations: READ_ONLY,
  input: Type.Object({}, { additionalProperties: false }),
  output: Type.Object({ subscriptions: Type.Array(Health) }),
  async run(ctx) {
    const rows = await organizationDeliveryHealth(ctx.pool, ctx.principal.organizationId);
    const subscriptions = rows.map(({ subscription, lastSuccessAt, failures24h }) => ({
      id: subscription.id,
      url_host: new URL(subscription.callback_url).host,
      event: subscription.event,
      state: subscription.status,
      circuit: circuitWords(subscription),
      last_success_at: lastSuccessAt?.toISOString() ?? null,
      failures_24h: failures24h,
    }));
    const lines = subscriptions.map(
      (s) =>
        `- ${s.url_host} (${s.event}): ${s.state}, ${s.circuit}; last success ${s.last_success_at ?? 'never'}; ${count(s.failures_24h, 'failure')} in 24 h`,
    );
    return { structured: { subscriptions }, text: `${count(subscriptions.length, 'subscription')}:\n${lines.join('\n')}` };
  },
});
