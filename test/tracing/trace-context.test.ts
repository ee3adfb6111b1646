// The W3C headers without the SDK (src/tracing/trace-context.ts) and the
// export decision from the OTEL_* variables (src/tracing/tracing-config.ts).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  newTraceContext,
  parseTraceparent,
  readTraceContext,
  traceparentHeader,
  tracestateHeader,
} from '../../src/tracing/trace-context.ts';
import { loadTracingConfig } from '../../src/tracing/tracing-config.ts';
import { ConfigError } from '../../src/config/config.ts';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('traceparent', () => {
  test('a valid header is stored in 25 bytes and read back', () => {
    const stored = parseTraceparent(`00-${TRACE}-${SPAN}-01`)!;
    assert.equal(stored.length, 25);
    assert.deepEqual(readTraceContext(stored), { traceId: TRACE, spanId: SPAN, flags: 1, tracestate: undefined });
    assert.equal(traceparentHeader(stored, 'b7ad6b7169203331'), `00-${TRACE}-b7ad6b7169203331-01`);
  });

  test('only the sampled flag is kept; a later version with more fields is read as version 00', () => {
    assert.equal(readTraceContext(parseTraceparent(`00-${TRACE}-${SPAN}-03`)!).flags, 1);
    assert.equal(readTraceContext(parseTraceparent(`00-${TRACE}-${SPAN}-00`)!).flags, 0);
    assert.equal(readTraceContext(parseTraceparent(`01-${TRACE}-${SPAN}-01-what-comes-next`)!).traceId, TRACE);
  });

  test('malformed headers are ignored (a new trace begins), never thrown', () => {
    for (const header of [
      undefined,
      '',
      'garbage',
      `00-${'0'.repeat(32)}-${SPAN}-01`,
      `00-${TRACE}-${'0'.repeat(16)}-01`,
      `ff-${TRACE}-${SPAN}-01`,
      `00-${TRACE.toUpperCase()}-${SPAN}-01`,
      `00-${TRACE}-${SPAN}-01-extra`,
      `00-${TRACE}-${SPAN}-1`,
      ['a', 'b'],
    ]) {
      assert.equal(parseTraceparent(header), undefined, String(header));
    }
  });

  test('tracestate is kept as received when it keeps the rules, dropped otherwise', () => {
    const kept = parseTraceparent(`00-${TRACE}-${SPAN}-01`, 'rojo=00f067aa0ba902b7, congo=t61rcWkgMzE')!;
    assert.equal(tracestateHeader(kept), 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE');
    for (const state of ['no equals', 'UPPER=x', `a=${'x'.repeat(600)}`, Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(',')]) {
      const stored = parseTraceparent(`00-${TRACE}-${SPAN}-01`, state)!;
      assert.equal(tracestateHeader(stored), undefined, state.slice(0, 20));
      assert.equal(readTraceContext(stored).traceId, TRACE, 'the traceparent stands');
    }
  });

  test('a new trace: random, non-zero ids, sampled', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 600; i++) {
      const { traceId, spanId, flags } = readTraceContext(newTraceContext());
      assert.match(traceId, /^[0-9a-f]{32}$/);
      assert.match(spanId, /^[0-9a-f]{16}$/);
      assert.equal(flags, 1);
      seen.add(traceId);
    }
    assert.equal(seen.size, 600);
  });
});

describe('OTEL_* variables', () => {
  test('export is off unless an exporter or an endpoint is named', () => {
    assert.deepEqual(loadTracingConfig({}).exporters, []);
    assert.deepEqual(loadTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).exporters, ['otlp']);
    assert.deepEqual(loadTracingConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }).exporters, ['otlp']);
    assert.deepEqual(loadTracingConfig({ OTEL_TRACES_EXPORTER: 'console' }).exporters, ['console']);
    assert.deepEqual(loadTracingConfig({ OTEL_TRACES_EXPORTER: 'otlp,console' }).exporters, ['otlp', 'console']);
  });

  test('none and OTEL_SDK_DISABLED win', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    assert.deepEqual(loadTracingConfig({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).exporters, []);
    assert.deepEqual(loadTracingConfig({ ...endpoint, OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' }).exporters, []);
  });

  test('the protocol: http/protobuf by default, the traces variable first; others stop the process naming the variable', () => {
    assert.equal(loadTracingConfig({}).protocol, 'http/protobuf');
    assert.equal(loadTracingConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).protocol, 'http/json');
    assert.equal(
      loadTracingConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }).protocol,
      'http/protobuf',
    );
    assert.throws(
      () => loadTracingConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }),
      (error) => error instanceof ConfigError && error.variable === 'OTEL_EXPORTER_OTLP_PROTOCOL',
    );
    assert.throws(
      () => loadTracingConfig({ OTEL_TRACES_EXPORTER: 'jaeger' }),
      (error) => error instanceof ConfigError && error.variable === 'OTEL_TRACES_EXPORTER',
    );
    assert.throws(
      () => loadTracingConfig({ OTEL_SDK_DISABLED: 'yes' }),
      (error) => error instanceof ConfigError && error.variable === 'OTEL_SDK_DISABLED',
    );
  });
});
