// Trace export through the OpenTelemetry SDK. Loaded only when export is on
// (start-tracing.ts imports it dynamically), so a process that does not export
// never loads the SDK. What is made here:
// - a server span per HTTP request (route template, status), child of the
//   request's traceparent (serverSpans, below);
// - a span per PostgreSQL statement under an active span, named by the
//   statement's name, never its values (src/db/pool.ts calls `statement`);
// - batch spans of their own, linked to the calls they served (group commit,
//   the claim);
// - a client span per delivery attempt, in the call's trace (attempt-trace.ts).
// Attributes never hold a call's summary, a token, a secret or a password:
// only ids, names, numbers and the receiver's host.
import {
  context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Context,
  type Link,
  type Span,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import { TraceState, W3CTraceContextPropagator } from '@opentelemetry/core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { readTraceContext, storeTraceContext, type StoredTraceContext } from './trace-context.ts';
import type { Attributes, SpanHandle, Tracing } from './tracing.ts';
import { VERSION } from '../version.ts';

/** The stored context as the SDK's remote parent. */
function spanContextOf(stored: StoredTraceContext): SpanContext {
  const parts = readTraceContext(stored);
  return {
    traceId: parts.traceId,
    spanId: parts.spanId,
    traceFlags: parts.flags ? TraceFlags.SAMPLED : TraceFlags.NONE,
    isRemote: true,
    ...(parts.tracestate ? { traceState: new TraceState(parts.tracestate) } : {}),
  };
}

function definedAttributes(attributes: Attributes): Record<string, string | number | boolean> {
  const defined: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) defined[key] = value;
  return defined;
}

function handle(span: Span, parent: Context): SpanHandle {
  const spanContext = span.spanContext();
  const active = trace.setSpan(parent, span);
  return {
    spanId: spanContext.spanId,
    flags: spanContext.traceFlags & TraceFlags.SAMPLED,
    setAttributes: (attributes) => span.setAttributes(definedAttributes(attributes)),
    link: (stored) => span.addLink({ context: spanContextOf(stored) }),
    end(error) {
      if (error !== undefined) {
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.setAttribute('error.type', error);
      }
      span.end();
    },
    run: (fn) => context.with(active, fn),
  };
}

export function otelTracing(provider: NodeTracerProvider): Tracing {
  const tracer: Tracer = provider.getTracer('switchboard', VERSION);
  return {
    currentContext() {
      const span = trace.getActiveSpan();
      if (!span) return undefined;
      const { traceId, spanId, traceFlags, traceState } = span.spanContext();
      return storeTraceContext(traceId, spanId, traceFlags, traceState?.serialize());
    },
    capture: () => context.active(),
    within: (captured, fn) => context.with(captured as Context, fn),
    async batch(name, served, fn) {
      const links: Link[] = [];
      for (const captured of served) {
        const span = trace.getSpan(captured as Context);
        if (span) links.push({ context: span.spanContext() });
      }
      const span = tracer.startSpan(name, { root: true, links }, ROOT_CONTEXT);
      const spanHandle = handle(span, ROOT_CONTEXT);
      try {
        const result = await spanHandle.run(() => fn(spanHandle));
        span.end();
        return result;
      } catch (error) {
        spanHandle.end(errorType(error));
        throw error;
      }
    },
    async child(name, attributes, fn) {
      const parent = context.active();
      const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes: definedAttributes(attributes) }, parent);
      const spanHandle = handle(span, parent);
      try {
        const result = await spanHandle.run(() => fn(spanHandle));
        span.end();
        return result;
      } catch (error) {
        spanHandle.end(errorType(error));
        throw error;
      }
    },
    startClient(name, parent, attributes) {
      const parentContext = trace.setSpanContext(ROOT_CONTEXT, spanContextOf(parent));
      const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes: definedAttributes(attributes) }, parentContext);
      return handle(span, parentContext);
    },
    statement(name, run) {
      const parent = context.active();
      if (!trace.getSpan(parent)) return run(noEnd);
      const span = tracer.startSpan(
        name,
        { kind: SpanKind.CLIENT, attributes: { 'db.system.name': 'postgresql', 'db.query.summary': name } },
        parent,
      );
      return context.with(trace.setSpan(parent, span), () =>
        run((error) => {
          if (error !== undefined) {
            span.setStatus({ code: SpanStatusCode.ERROR });
            span.setAttribute('error.type', errorType(error));
          }
          span.end();
        }),
      );
    },
    logFields() {
      const span = trace.getActiveSpan();
      if (!span) return undefined;
      const { traceId, spanId } = span.spanContext();
      return { trace_id: traceId, span_id: spanId };
    },
    serverSpans: (app) => serverSpans(tracer, app),
    shutdown: () => provider.shutdown(),
  };
}

const noEnd = () => {};

/** An error's kind for `error.type`: PostgreSQL's SQLSTATE or the error's class, never its message (it may quote values). */
export function errorType(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code !== '') return code;
  return error instanceof Error ? error.name : 'error';
}

/** The request's remote parent from its traceparent and tracestate headers (W3C). */
const requestPropagator = new W3CTraceContextPropagator();

const SERVER_SPAN = Symbol('server span');
type Traced = FastifyRequest & { [SERVER_SPAN]?: Span };

/**
 * A server span per request, named by its route template, child of the
 * request's traceparent; the rest of the request runs with it active. The
 * URL is recorded as its route and path only: a query string may carry codes
 * or tokens.
 */
function serverSpans(tracer: Tracer, app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const parent = requestPropagator.extract(ROOT_CONTEXT, request.headers, headerGetter);
    const route = request.routeOptions.url;
    // The path only when a route matched (its parameters are ids): an unmatched one may hold anything a client typed.
    const path = route ? request.url.split('?', 1)[0] : undefined;
    const span = tracer.startSpan(
      route ? `${request.method} ${route}` : request.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': request.method,
          ...(route ? { 'http.route': route } : {}),
          ...(path ? { 'url.path': path } : {}),
          'url.scheme': request.protocol,
        },
      },
      parent,
    );
    (request as Traced)[SERVER_SPAN] = span;
    context.with(trace.setSpan(parent, span), done);
  });
  const end = (request: FastifyRequest, status: number | undefined) => {
    const span = (request as Traced)[SERVER_SPAN];
    if (!span) return;
    (request as Traced)[SERVER_SPAN] = undefined;
    if (status !== undefined) span.setAttribute('http.response.status_code', status);
    if (status === undefined || status >= 500) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.setAttribute('error.type', status === undefined ? 'aborted' : String(status));
    }
    span.end();
  };
  app.addHook('onResponse', (request, reply, done) => {
    end(request, reply.statusCode);
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    end(request, undefined);
    done();
  });
}

const headerGetter = {
  keys: (carrier: FastifyRequest['headers']) => Object.keys(carrier),
  get: (carrier: FastifyRequest['headers'], key: string) => carrier[key],
};
