// Whether and how traces are exported, from the standard OpenTelemetry
// variables (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/).
// The SDK reads the rest itself (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT,
// OTEL_TRACES_SAMPLER and _ARG, OTEL_BSP_*, OTEL_RESOURCE_ATTRIBUTES,
// OTEL_SERVICE_NAME); what is decided here is what Switchboard chooses: on or
// off, which exporters, which protocol. A value it cannot honour stops the
// process with a message naming the variable, as every other setting does.
import { ConfigError } from '../config/config.ts';

export type TraceExporterKind = 'otlp' | 'console';
export type OtlpProtocol = 'http/protobuf' | 'http/json';

export interface TracingConfig {
  /** Empty: export off (no SDK loaded). */
  exporters: TraceExporterKind[];
  protocol: OtlpProtocol;
}

const EXPORTERS = new Set(['otlp', 'console', 'none']);
const PROTOCOLS = new Set<string>(['http/protobuf', 'http/json']);

function flag(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return false;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw new ConfigError(name, `must be true or false, got "${env[name]}"`);
}

export function loadTracingConfig(env: NodeJS.ProcessEnv = process.env): TracingConfig {
  const disabled = flag(env, 'OTEL_SDK_DISABLED');
  const protocolVariable = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim()
    ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
    : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = env[protocolVariable]?.trim() || 'http/protobuf';
  if (!PROTOCOLS.has(protocol)) {
    throw new ConfigError(protocolVariable, `must be http/protobuf or http/json (grpc is not supported), got "${protocol}"`);
  }
  const listed = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  for (const name of listed) {
    if (!EXPORTERS.has(name)) throw new ConfigError('OTEL_TRACES_EXPORTER', `must list otlp, console or none, got "${name}"`);
  }
  const endpointSet = Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
  let exporters: TraceExporterKind[];
  if (disabled || listed.includes('none')) exporters = [];
  else if (listed.length > 0) exporters = [...new Set(listed as TraceExporterKind[])];
  // Unset: exported only when an endpoint says where to.
  else exporters = endpointSet ? ['otlp'] : [];
  return { exporters, protocol: protocol as OtlpProtocol };
}
