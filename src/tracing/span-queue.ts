// How the export queues of the batch span processors fare, for /metrics
// (src/metrics/metrics.ts): spans waiting, and spans lost because a queue was
// full (a collector away or slow: the queue is bounded by
// OTEL_BSP_MAX_QUEUE_SIZE and a span past it is dropped, never waited for) or
// because their export failed. The SDK reports both through its
// self-observability instruments, given a meter provider
// (selfObsMeterProvider); this one keeps those two figures and ignores the rest.
// Process-wide, like the tracer provider: zero while export is off (and, as
// the SDK, @opentelemetry/api is then not loaded: /metrics imports this module).
import type { Counter, Meter, MeterProvider, ObservableCallback, ObservableUpDownCounter } from '@opentelemetry/api';

/** The SDK's instruments (semantic conventions, otel.sdk.*). */
const PROCESSED = 'otel.sdk.processor.span.processed';
const QUEUE_SIZE = 'otel.sdk.processor.span.queue.size';

export type DropReason = 'queue_full' | 'export_failed';

const dropped: Record<DropReason, number> = { queue_full: 0, export_failed: 0 };
const queueSizes = new Set<ObservableCallback>();

/** Given to each BatchSpanProcessor (src/tracing/start-tracing.ts), over the API's no-op meter for every other instrument. */
export function spanQueueMeterProvider(noop: Meter): MeterProvider {
  return { getMeter: () => meter(noop) };
}

function meter(noop: Meter): Meter {
  const own: Meter = Object.create(noop);
  own.createCounter = (name, options) => {
    if (name !== PROCESSED) return noop.createCounter(name, options);
    // Spans whose processing ended: exported (no error.type), dropped at a full queue, or failed with their export.
    const processed: Counter = {
      add(value, attributes) {
        const error = attributes?.['error.type'];
        if (error === 'queue_full') dropped.queue_full += value;
        else if (error !== undefined) dropped.export_failed += value;
      },
    };
    return processed;
  };
  own.createObservableUpDownCounter = (name, options) => {
    if (name !== QUEUE_SIZE) return noop.createObservableUpDownCounter(name, options);
    const size: ObservableUpDownCounter = {
      addCallback: (callback) => void queueSizes.add(callback),
      removeCallback: (callback) => void queueSizes.delete(callback),
    };
    return size;
  };
  return own;
}

/** Spans lost so far, by reason. */
export function spansDropped(): Readonly<Record<DropReason, number>> {
  return dropped;
}

/** Spans waiting for export now, in every processor's queue. */
export function spansQueued(): number {
  let total = 0;
  // The SDK's callback observes synchronously.
  for (const callback of queueSizes) void callback({ observe: (value) => (total += value) });
  return total;
}
