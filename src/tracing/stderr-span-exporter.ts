// OTEL_TRACES_EXPORTER=console: each span, as the SDK's ConsoleSpanExporter
// shows it, on stderr. The SDK's own exporter writes to stdout, where
// LOG_FORMAT=json promises one JSON object a line to a log collector.
import { inspect } from 'node:util';
import { ExportResultCode, hrTimeToMicroseconds, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

function exportInfo(span: ReadableSpan): object {
  return {
    resource: { attributes: span.resource.attributes },
    instrumentationScope: span.instrumentationScope,
    traceId: span.spanContext().traceId,
    parentSpanContext: span.parentSpanContext,
    traceState: span.spanContext().traceState?.serialize(),
    name: span.name,
    id: span.spanContext().spanId,
    kind: span.kind,
    timestamp: hrTimeToMicroseconds(span.startTime),
    duration: hrTimeToMicroseconds(span.duration),
    attributes: span.attributes,
    status: span.status,
    events: span.events,
    links: span.links,
  };
}

export class StderrSpanExporter implements SpanExporter {
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    for (const span of spans) process.stderr.write(`${inspect(exportInfo(span), { depth: 3 })}\n`);
    done({ code: ExportResultCode.SUCCESS });
  }

  async shutdown(): Promise<void> {}

  async forceFlush(): Promise<void> {}
}
