// The trace context a request keeps with its call (POST /calls, POST
// /calls/{id}/complete). With export off: the request's traceparent as
// received (a new trace without one). With export on: the request's server
// span, itself a child of that traceparent, so a delivery attempt's span is
// the server span's child.
import type { IncomingHttpHeaders } from 'node:http';
import { newTraceContext, parseTraceparent, type StoredTraceContext } from './trace-context.ts';
import { activeTracing } from './tracing.ts';

/** The request's own context, or undefined when it carried no valid traceparent. */
export function receivedTraceContext(headers: IncomingHttpHeaders): StoredTraceContext | undefined {
  const received = parseTraceparent(headers.traceparent, headers.tracestate);
  if (!received) return undefined;
  return activeTracing()?.currentContext() ?? received;
}

/** The request's context: the one it carried, else a new trace (with export on, the server span's own). */
export function requestTraceContext(headers: IncomingHttpHeaders): StoredTraceContext {
  const tracing = activeTracing();
  if (tracing) return tracing.currentContext() ?? parseTraceparent(headers.traceparent, headers.tracestate) ?? newTraceContext();
  return parseTraceparent(headers.traceparent, headers.tracestate) ?? newTraceContext();
}

/** A completion's: the one it carried wins; without, the call keeps its own (`fresh` only for a call that has none). */
export function completionTraceContext(headers: IncomingHttpHeaders): {
  received: StoredTraceContext | undefined;
  fresh: StoredTraceContext;
} {
  const received = receivedTraceContext(headers);
  return { received, fresh: received ?? requestTraceContext(headers) };
}
