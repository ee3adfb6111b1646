// Prometheus metrics. Each application instance (and each test) has its own
// registry instead of prom-client's global one, so two instances in one
// process never collide; `serve` shares one between the HTTP app and its
// delivery worker.
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export type DeliveryOutcomeLabel = 'succeeded' | 'retrying' | 'failed' | 'subscription_removed' | 'superseded';

export interface Metrics {
  registry: Registry;
  /** Delivery attempts by outcome. */
  deliveries: Counter<'outcome'>;
  /** Wall time of one attempt (connect to answer or error), by outcome. */
  deliveryLatency: Histogram<'outcome'>;
}

export function createMetrics(options: { processMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.processMetrics) collectDefaultMetrics({ register: registry, prefix: 'switchboard_' });
  return {
    registry,
    deliveries: new Counter({
      name: 'switchboard_webhook_delivery_attempts_total',
      help: 'Webhook delivery attempts, by outcome (succeeded, retrying, failed, subscription_removed, superseded)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    deliveryLatency: new Histogram({
      name: 'switchboard_webhook_delivery_attempt_duration_seconds',
      help: 'Duration of one webhook delivery attempt, by outcome',
      labelNames: ['outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
  };
}
