// Whether and how traces are exported, from the standard OpenTelemetry
// variables (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/).
// The SDK reads the rest itself (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT,
// OTEL_TRACES_SAMPLER and _ARG, OTEL_BSP_*, OTEL_RESOURCE_ATTRIBUTES,
// OTEL_SERVICE_NAME); what is decided here is what Switchboard chooses: on or
// off, which exporters, which protocol. A value it cannot honour stops the
// process with a message naming the variable, as every other setting does.
import { readSetting } from '../config/settings/index.ts';
import type { OTLP_PROTOCOLS } from '../config/settings/traces.ts';

export type TraceExporterKind = 'otlp' | 'console';
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

export interface TracingConfig {
  /** Empty: export off (no SDK loaded). */
  exporters: TraceExporterKind[];
  protocol: OtlpProtocol;
}

export function loadTracingConfig(env: NodeJS.ProcessEnv = process.env): TracingConfig {
  const disabled = readSetting(env, 'OTEL_SDK_DISABLED');
  const protocol = readSetting(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? readSetting(env, 'OTEL_EXPORTER_OTLP_PROTOCOL');
  const listed = readSetting(env, 'OTEL_TRACES_EXPORTER') ?? [];
  const endpointSet = Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
  let exporters: TraceExporterKind[];
  if (disabled || listed.includes('none')) exporters = [];
  else if (listed.length > 0) exporters = [...new Set(listed as TraceExporterKind[])];
  // Unset: exported only when an endpoint says where to.
  else exporters = endpointSet ? ['otlp'] : [];
  return { exporters, protocol };
}
