// An OTLP/HTTP trace receiver in the test process (a plain node:http server):
// it keeps every export request as it arrived and decodes it, http/json with
// JSON.parse and http/protobuf with protobufjs and the published OTLP .proto
// files (otlp-proto/), into one flat list of spans.
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

export interface ReceivedExport {
  path: string;
  contentType: string | undefined;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind number: 2 server, 3 client. */
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  resource: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** http://127.0.0.1:<port>, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  exports: ReceivedExport[];
  /** Every span received so far, decoded by its content type. */
  spans(): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

const PROTO_ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'otlp-proto');
let requestType: Promise<protobuf.Type> | undefined;

function exportRequestType(): Promise<protobuf.Type> {
  requestType ??= (async () => {
    const root = new protobuf.Root();
    root.resolvePath = (_origin, target) => (path.isAbsolute(target) ? target : path.join(PROTO_ROOT, target));
    await root.load('opentelemetry/proto/collector/trace/v1/trace_service.proto', { keepCase: false });
    return root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
  })();
  return requestType;
}

interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface KeyValue {
  key: string;
  value?: AnyValue;
}
interface WireSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  attributes?: KeyValue[];
  links?: { traceId: string; spanId: string }[];
}
interface WireRequest {
  resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: WireSpan[] }[] }[];
}

function value(v: AnyValue | undefined): unknown {
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  return v.doubleValue;
}

function attributes(list: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, value(kv.value)]));
}

function flatten(request: WireRequest): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of request.resourceSpans ?? []) {
    const resource = attributes(resourceSpans.resource?.attributes);
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        spans.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? '',
          name: span.name,
          kind: span.kind ?? 0,
          attributes: attributes(span.attributes),
          links: (span.links ?? []).map((link) => ({ traceId: link.traceId, spanId: link.spanId })),
          resource,
        });
      }
    }
  }
  return spans;
}

/** An export request decoded: protobuf (ids as bytes, turned to hex) or JSON (ids already hex, as OTLP/JSON writes them). */
export async function decodeExport(received: ReceivedExport): Promise<ReceivedSpan[]> {
  if (received.contentType === 'application/x-protobuf') {
    const type = await exportRequestType();
    const message = type.toObject(type.decode(received.body), { bytes: String, longs: String, enums: Number, defaults: false });
    const hex = (base64: string | undefined) => (base64 ? Buffer.from(base64, 'base64').toString('hex') : '');
    const request = message as WireRequest;
    for (const resourceSpans of request.resourceSpans ?? []) {
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          span.traceId = hex(span.traceId);
          span.spanId = hex(span.spanId);
          span.parentSpanId = hex(span.parentSpanId);
          for (const link of span.links ?? []) {
            link.traceId = hex(link.traceId);
            link.spanId = hex(link.spanId);
          }
        }
      }
    }
    return flatten(request);
  }
  if (received.contentType === 'application/json') return flatten(JSON.parse(received.body.toString('utf8')) as WireRequest);
  throw new Error(`an OTLP export with content-type ${received.contentType}`);
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const exports: ReceivedExport[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      exports.push({ path: req.url ?? '', contentType: req.headers['content-type'], headers: req.headers, body: Buffer.concat(chunks) });
      // An empty ExportTraceServiceResponse: all spans accepted.
      res.writeHead(200, { 'content-type': req.headers['content-type'] ?? 'application/json' });
      res.end(req.headers['content-type'] === 'application/json' ? '{}' : '');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exports,
    async spans() {
      const decoded = await Promise.all(exports.map(decodeExport));
      return decoded.flat();
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
