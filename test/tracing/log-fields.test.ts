// With trace export on, pino's mixin adds trace_id and span_id to lines
// written inside a span. Outside one, each line must carry only its own
// fields: pino merges a line's fields into the object the mixin returns, so a
// shared object would hand every earlier line's fields to the next ones.
// @own-test-process: it registers OpenTelemetry's global tracer provider, which a process takes once.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { trace } from '@opentelemetry/api';
import { pino } from 'pino';
import { traceLogFields } from '../../src/http/logger.ts';
import { startTracing, stopTracing } from '../../src/tracing/start-tracing.ts';

function capture(): { stream: Writable; lines: () => Record<string, unknown>[] } {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += chunk;
      done();
    },
  });
  return {
    stream,
    lines: () =>
      text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

describe('log lines with trace export on', () => {
  before(async () => {
    // The console exporter (on stderr) turns export on without a collector.
    assert.ok(await startTracing({ exporters: ['console'], protocol: 'http/protobuf' }));
  });
  after(() => stopTracing());

  test("a line written outside a span carries none of an earlier line's fields", () => {
    const { stream, lines } = capture();
    const logger = pino({ ...traceLogFields() }, stream);
    assert.ok(traceLogFields().mixin, 'export on: the mixin is installed');
    logger.warn({ component: 'webhook-listener', task: 'alerts', err: new Error('connect ECONNREFUSED') }, 'first');
    logger.info('second');
    logger.info({ rule: 'incident' }, 'third');
    const [first, second, third] = lines();
    assert.equal(first!.component, 'webhook-listener');
    assert.deepEqual(
      Object.keys(second!).filter((key) => !['level', 'time', 'pid', 'hostname', 'msg'].includes(key)),
      [],
      `the second line has only its own fields: ${JSON.stringify(second)}`,
    );
    assert.equal(third!.rule, 'incident');
    assert.equal(third!.component, undefined);
  });

  test("inside a span a line carries that span's trace_id and span_id, and the next line outside it does not", () => {
    const { stream, lines } = capture();
    const logger = pino({ ...traceLogFields() }, stream);
    trace.getTracer('test').startActiveSpan('work', (span) => {
      logger.info('inside');
      span.end();
    });
    logger.info('outside');
    const [inside, outside] = lines();
    assert.match(String(inside!.trace_id), /^[0-9a-f]{32}$/);
    assert.match(String(inside!.span_id), /^[0-9a-f]{16}$/);
    assert.equal(outside!.trace_id, undefined);
    assert.equal(outside!.span_id, undefined);
  });
});
