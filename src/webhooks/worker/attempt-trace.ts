// An attempt's place in its call's trace (docs/interface.md §6.1,
// `traceparent`): every attempt, retry and redelivery sends the call's trace id
// with a span id of its own as the parent id. With export off that id is
// random and nothing else happens; with export on it is the id of the
// attempt's client span, a child of the context stored with the call.
import { activeTracing, type SpanHandle } from '../../tracing/tracing.ts';
import {
  legacyTraceContext,
  newSpanId,
  traceparentHeader,
  tracestateHeader,
  type StoredTraceContext,
} from '../../tracing/trace-context.ts';
import type { LeasedDelivery } from './claim.queries.ts';

export interface AttemptTrace {
  /** The headers this attempt sends. */
  traceparent: string;
  tracestate: string | undefined;
  /** Runs `fn` with the attempt's span active (its outcome's record links to it). */
  run<T>(fn: () => T): T;
  /** Ends the attempt's span with what became of it. */
  end(result: AttemptTraceResult): void;
}

export interface AttemptTraceResult {
  /** The outcome logged (succeeded, retrying, failed, …), or why none was. */
  outcome: string;
  statusCode?: number | undefined;
  /** The attempt's error kind (timeout, connection, …): no message. */
  error?: string | undefined;
}

const untraced = <T>(fn: () => T): T => fn();
const noEnd = () => {};

/** The receiver's host and port, never its path or query (a hook URL may carry a token there). */
function receiver(url: string): { host: string | undefined; port: number | undefined } {
  try {
    const parsed = new URL(url);
    return { host: parsed.hostname, port: parsed.port ? Number(parsed.port) : parsed.protocol === 'https:' ? 443 : 80 };
  } catch {
    return { host: undefined, port: undefined };
  }
}

export function startAttemptTrace(claimed: LeasedDelivery): AttemptTrace {
  const stored: StoredTraceContext = claimed.trace_context ?? legacyTraceContext(claimed.call_id);
  const tracestate = tracestateHeader(stored);
  const tracing = activeTracing();
  if (!tracing) return { traceparent: traceparentHeader(stored, newSpanId()), tracestate, run: untraced, end: noEnd };
  const { host, port } = receiver(claimed.callback_url);
  const span: SpanHandle = tracing.startClient(`deliver ${claimed.event}`, stored, {
    'http.request.method': 'POST',
    'server.address': host,
    'server.port': port,
    'switchboard.subscription.id': claimed.subscription_id,
    'switchboard.delivery.id': claimed.id,
    'switchboard.delivery.attempt': claimed.attempt,
    'switchboard.call.id': claimed.call_id,
  });
  // The span's own sampling decision goes out in the flags (a parent-based sampler follows the call's).
  const traceparent = `${traceparentHeader(stored, span.spanId).slice(0, -2)}0${span.flags}`;
  return {
    traceparent,
    tracestate,
    run: (fn) => span.run(fn),
    end(result) {
      span.setAttributes({ 'switchboard.delivery.outcome': result.outcome, 'http.response.status_code': result.statusCode });
      const failed = result.error ?? (result.statusCode !== undefined && result.statusCode >= 400 ? String(result.statusCode) : undefined);
      span.end(failed);
    },
  };
}
