// OpenTelemetry's own variables keep the specification's rules
// (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/):
// Switchboard parses the few that decide whether and how traces are exported
// (src/tracing/tracing-config.ts); the SDK reads the rest itself.
import { ConfigError } from '../config-error.ts';
import { choice, otelBoolean, text, type Kind } from '../kinds.ts';
import { setting } from '../setting.ts';

export const TRACE_EXPORTERS = ['otlp', 'console', 'none'] as const;
export type TraceExporterName = (typeof TRACE_EXPORTERS)[number];

const exporterList: Kind<TraceExporterName[]> = {
  accepts: '`otlp`, `console` or `none`, several separated by commas (any case)',
  parse(raw, name) {
    const listed = raw
      .split(',')
      .map((item) => item.trim().toLowerCase())
      .filter((item) => item !== '');
    for (const item of listed) {
      if (!(TRACE_EXPORTERS as readonly string[]).includes(item)) {
        throw new ConfigError(name, `must list otlp, console or none, got "${item}"`);
      }
    }
    return listed as TraceExporterName[];
  },
};

export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
const protocol: Kind<(typeof OTLP_PROTOCOLS)[number]> = {
  accepts: '`http/protobuf` or `http/json` (gRPC is not supported)',
  parse(raw, name) {
    const value = choice(OTLP_PROTOCOLS);
    try {
      return value.parse(raw, name);
    } catch {
      throw new ConfigError(name, `must be http/protobuf or http/json (grpc is not supported), got "${raw}"`);
    }
  },
};

/** A variable only the SDK reads. */
function sdk(accepts: string, defaultText: string, meaning: string) {
  return setting({ kind: text(accepts), default: undefined, defaultText, meaning, readBySdk: true });
}

export const TRACES = {
  OTEL_TRACES_EXPORTER: setting({
    kind: exporterList,
    default: undefined,
    defaultText: 'unset',
    meaning:
      'Where spans go: `otlp`, `console` (spans on stderr, so stdout keeps one log line per line), both, or `none`. Unset: `otlp` when an endpoint below is set, else no export.',
  }),
  OTEL_SDK_DISABLED: setting({ kind: otelBoolean, default: 'false', meaning: '`true` turns export off, whatever else is set.' }),
  OTEL_EXPORTER_OTLP_ENDPOINT: sdk(
    'an `http://` or `https://` URL',
    'unset',
    "The collector's base URL (`/v1/traces` is appended), e.g. `http://otel-collector:4318`.",
  ),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: sdk(
    'an `http://` or `https://` URL',
    'unset',
    "The collector's traces URL, used as it is (wins over the one above).",
  ),
  OTEL_EXPORTER_OTLP_PROTOCOL: setting({
    kind: protocol,
    default: 'http/protobuf',
    meaning: 'How spans are sent to the collector; `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` wins over it.',
  }),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: setting({
    kind: protocol,
    default: undefined,
    defaultText: 'unset',
    meaning: 'The same for traces alone; wins over `OTEL_EXPORTER_OTLP_PROTOCOL`.',
  }),
  OTEL_EXPORTER_OTLP_HEADERS: sdk(
    '`key=value` pairs separated by commas',
    'unset',
    'Headers for the collector (an API key, say); `OTEL_EXPORTER_OTLP_TIMEOUT` and `OTEL_EXPORTER_OTLP_COMPRESSION` (`gzip`) are honoured too.',
  ),
  OTEL_SERVICE_NAME: sdk('a name', '`switchboard`', '`service.name` of every span.'),
  OTEL_RESOURCE_ATTRIBUTES: sdk(
    '`key=value` pairs separated by commas',
    'unset',
    'More resource attributes (`deployment.environment.name=production`).',
  ),
  OTEL_TRACES_SAMPLER: sdk(
    '`always_on`, `always_off`, `traceidratio`, `parentbased_always_on`, `parentbased_always_off` or `parentbased_traceidratio`',
    '`parentbased_always_on`',
    "Which traces are recorded: `parentbased_traceidratio` with the ratio below keeps that share (and follows the caller's sampled flag).",
  ),
  OTEL_TRACES_SAMPLER_ARG: sdk('a number from `0` to `1`', 'unset', "The sampler's ratio (`0.1`: a tenth)."),
  OTEL_BSP_SCHEDULE_DELAY: sdk(
    'milliseconds, a bare number',
    '`5000`',
    'Time between exports of the batch span processor; `OTEL_BSP_MAX_QUEUE_SIZE` (2048: past it spans are dropped, never waited for), `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` (512) and `OTEL_BSP_EXPORT_TIMEOUT` (30000) too.',
  ),
};
