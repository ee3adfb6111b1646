// Prometheus metrics. Each application instance (and each test) has its own
// registry instead of prom-client's global one, so two instances in one
// process never collide; `serve` shares one between the HTTP app and its
// delivery worker.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { spansDropped, spansQueued } from '../tracing/span-queue.ts';

export interface Metrics {
  registry: Registry;
  /** Delivery attempts by outcome. */
  deliveries: Counter<'outcome'>;
  /** Attempt outcomes not recorded because their delivery or subscription was gone (deleted while the attempt ran). */
  outcomesDropped: Counter;
  /** Wall time of one attempt (connect to answer or error), by outcome. */
  deliveryLatency: Histogram<'outcome'>;
  /** HTTP requests answered, by method, route template and status. */
  httpRequests: Counter<'method' | 'route' | 'status'>;
  /** Time to answer an HTTP request, by method and route template. */
  httpDuration: Histogram<'method' | 'route'>;
  /** Where the queue-depth gauge reads from at scrape time (set by the HTTP app, which has the database). */
  queueDepthSource?: () => Promise<{ pending: number; in_flight: number }>;
  /** MCP tool calls, by tool and outcome (ok, error: a tool error result, failed: an unexpected error). */
  mcpToolCalls: Counter<'tool' | 'outcome'>;
  /** Alert e-mails the SMTP server accepted. */
  alertsSent: Counter;
  /** Alert e-mail sends that failed (each attempt: retried later, or given up). */
  alertsFailed: Counter;
  /** Where the waiting-alerts gauge reads from at scrape time (set with queueDepthSource). */
  alertsWaitingSource?: () => Promise<number>;
  /** Where the circuit-state gauge reads from at scrape time (set with queueDepthSource). */
  circuitStateSource?: () => Promise<{ closed: number; open: number; probing: number }>;
}

export function createMetrics(options: { processMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.processMetrics) collectDefaultMetrics({ register: registry, prefix: 'switchboard_' });
  const metrics: Metrics = {
    registry,
    deliveries: new Counter({
      name: 'switchboard_webhook_delivery_attempts_total',
      help: 'Webhook delivery attempts, by outcome (succeeded, retrying, failed, subscription_removed, superseded)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    outcomesDropped: new Counter({
      name: 'switchboard_webhook_outcomes_dropped_total',
      help: 'Webhook attempt outcomes not recorded because their delivery or subscription was deleted while the attempt ran',
      registers: [registry],
    }),
    deliveryLatency: new Histogram({
      name: 'switchboard_webhook_delivery_attempt_duration_seconds',
      help: 'Duration of one webhook delivery attempt, by outcome',
      labelNames: ['outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    httpRequests: new Counter({
      name: 'switchboard_http_requests_total',
      help: 'HTTP requests answered, by method, route template and status code',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'switchboard_http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by method and route template',
      labelNames: ['method', 'route'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    mcpToolCalls: new Counter({
      name: 'switchboard_mcp_tool_calls_total',
      help: 'MCP tool calls at /mcp, by tool and outcome (ok; error: the tool answered isError; failed: an unexpected error)',
      labelNames: ['tool', 'outcome'],
      registers: [registry],
    }),
    alertsSent: new Counter({
      name: 'switchboard_alerts_sent_total',
      help: 'Alert e-mails the SMTP server accepted (one per alert and recipient)',
      registers: [registry],
    }),
    alertsFailed: new Counter({
      name: 'switchboard_alerts_failed_total',
      help: 'Alert e-mail sends that failed: the SMTP server away or refusing (retried with backoff) or the recipient refused for good',
      registers: [registry],
    }),
  };
  new Gauge({
    name: 'switchboard_alerts_waiting',
    help: 'Alert e-mails in the outbox waiting to be sent (first try or a retry)',
    registers: [registry],
    async collect() {
      if (!metrics.alertsWaitingSource) return;
      this.set(await metrics.alertsWaitingSource());
    },
  });
  new Gauge({
    name: 'switchboard_webhook_deliveries_queued',
    help: 'Webhook deliveries not finished yet: waiting for an attempt (pending) or being attempted now (in_flight)',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      if (!metrics.queueDepthSource) return;
      const depth = await metrics.queueDepthSource();
      this.set({ state: 'pending' }, depth.pending);
      this.set({ state: 'in_flight' }, depth.in_flight);
    },
  });
  new Gauge({
    name: 'switchboard_webhook_circuit_state',
    help: 'Active webhook subscriptions by circuit state: closed (delivering), open (nothing sent until its wait is over), probing (its wait is over: one probe at a time)',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      if (!metrics.circuitStateSource) return;
      const counts = await metrics.circuitStateSource();
      for (const state of ['closed', 'open', 'probing'] as const) this.set({ state }, counts[state]);
    },
  });
  // Trace export (OTEL_*): process-wide figures, zero while export is off.
  new Counter({
    name: 'switchboard_trace_spans_dropped_total',
    help: 'Spans never exported: queue_full (the export queue, OTEL_BSP_MAX_QUEUE_SIZE, was full: a collector away or slow) or export_failed',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [reason, count] of Object.entries(spansDropped())) this.inc({ reason }, count);
    },
  });
  new Gauge({
    name: 'switchboard_trace_span_queue_size',
    help: 'Spans waiting for export (at most OTEL_BSP_MAX_QUEUE_SIZE per exporter)',
    registers: [registry],
    collect() {
      this.set(spansQueued());
    },
  });
  return metrics;
}
