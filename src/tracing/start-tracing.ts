// Starts trace export when the OTEL_* variables ask for it (tracing-config.ts),
// loading the SDK only then. The SDK reads its own variables: the sampler
// (OTEL_TRACES_SAMPLER, _ARG; default parentbased_always_on), the batch
// processor (OTEL_BSP_*), the exporter's endpoint, headers, timeout and
// compression (OTEL_EXPORTER_OTLP_*), the resource (OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES, over service.name switchboard).
import type { MeterProvider } from '@opentelemetry/api';
import type { BufferConfig } from '@opentelemetry/sdk-trace-base';
import { VERSION } from '../version.ts';
import { spanQueueMeterProvider } from './span-queue.ts';
import type { TracingConfig } from './tracing-config.ts';
import { activeTracing, setActiveTracing, type Tracing } from './tracing.ts';

export const DEFAULT_SERVICE_NAME = 'switchboard';

/** Starts export (undefined when the configuration leaves it off) and makes it the process's (activeTracing). */
export async function startTracing(config: TracingConfig): Promise<Tracing | undefined> {
  if (config.exporters.length === 0) return undefined;
  // A second start in one process (tests) keeps the first.
  const running = activeTracing();
  if (running) return running;
  const [{ NodeTracerProvider }, { BatchSpanProcessor }, resources, { otelTracing }, { StderrSpanExporter }, { createNoopMeter }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-node'),
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/resources'),
      import('./otel-tracing.ts'),
      import('./stderr-span-exporter.ts'),
      import('@opentelemetry/api'),
    ]);
  // The queue's size and its drops reach /metrics (src/tracing/span-queue.ts); its limits stay the OTEL_BSP_* variables.
  // selfObsMeterProvider is the SDK's (experimental) option, passed on by BatchSpanProcessor beside those.
  const options: BufferConfig & { selfObsMeterProvider: MeterProvider } = {
    selfObsMeterProvider: spanQueueMeterProvider(createNoopMeter()),
  };
  const processors = [];
  for (const kind of config.exporters) {
    if (kind === 'console') processors.push(new BatchSpanProcessor(new StderrSpanExporter(), options));
    else {
      const { OTLPTraceExporter } =
        config.protocol === 'http/json'
          ? await import('@opentelemetry/exporter-trace-otlp-http')
          : await import('@opentelemetry/exporter-trace-otlp-proto');
      processors.push(new BatchSpanProcessor(new OTLPTraceExporter(), options));
    }
  }
  // Later wins: the SDK's defaults, then Switchboard's name and version, then OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.name': DEFAULT_SERVICE_NAME, 'service.version': VERSION }))
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: processors });
  // The context manager (AsyncLocalStorage) and the W3C propagator.
  provider.register();
  const tracing = otelTracing(provider);
  setActiveTracing(tracing);
  return tracing;
}

/** Exports what is waiting and stops (the process is stopping). */
export async function stopTracing(): Promise<void> {
  const tracing = activeTracing();
  if (!tracing) return;
  setActiveTracing(undefined);
  await tracing.shutdown();
}
